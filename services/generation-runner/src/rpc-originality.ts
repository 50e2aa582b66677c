// OriginalityCheckService: the detector's score of a version a client made after generation (an
// edit, a restore), recorded on that version (and on the article while it is current), with the
// version's brief checks (quality-report.ts) measured against the article's brief as generation
// measures its own versions: checks and report only, never a repair. The text scored is what a
// generated version's score is taken on: the body of the content without its images.
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { OriginalityCheckService } from "../../../proto/gen/articles/generation_runner/v1/originality_pb.ts";
import type { Article, ArticleLifecycleService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import type { OriginalityDetector } from "./domain/originality.ts";
import { checkVersionOriginality } from "./domain/version-originality.ts";

export interface OriginalityCheckDeps {
  detector: OriginalityDetector;
  versions: Client<typeof ArticleVersionService>;
  lifecycle: Client<typeof ArticleLifecycleService>;
  readArticle(externalId: string): Promise<Article | undefined>;
}

export const originalityCheckHandlers = (deps: OriginalityCheckDeps): ServiceImpl<typeof OriginalityCheckService> => ({
  async checkVersion(req) {
    const [{ version }, article] = await Promise.all([deps.versions.getVersion({ externalId: req.externalId, number: req.number }), deps.readArticle(req.externalId)]);
    const v = version!;
    const text = { content: v.content ?? "", words: v.wordCount, sources: v.sources, removed: v.citationsRemoved };
    // An edited version is measured against the brief here: its checks are made with its score.
    const aiDetectionScore = await checkVersionOriginality(deps, req.externalId, article, { id: v.id, text, description: v.description ?? null, hasQuality: false });
    return { aiDetectionScore };
  },
});
