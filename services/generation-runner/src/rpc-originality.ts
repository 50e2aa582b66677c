// OriginalityCheckService: the detector's score of a version a client made after generation (an
// edit, a restore, a section revision), recorded on that version (and on the article while it is current), with the
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

/**
 * Scores version `number` of the article and measures its brief checks, recording both; the score.
 * Asked for by the gateway after an edit, and by a section revision's run for the version it made.
 */
export async function checkStoredVersion(deps: OriginalityCheckDeps, externalId: string, number: number): Promise<number> {
  const [{ version }, article] = await Promise.all([deps.versions.getVersion({ externalId, number }), deps.readArticle(externalId)]);
  const v = version!;
  const text = { content: v.content ?? "", words: v.wordCount, sources: v.sources, removed: v.citationsRemoved };
  // A version made after generation is measured against the brief here: its checks come with its score.
  return checkVersionOriginality(deps, externalId, article, { id: v.id, text, description: v.description ?? null, hasQuality: false });
}

export const originalityCheckHandlers = (deps: OriginalityCheckDeps): ServiceImpl<typeof OriginalityCheckService> => ({
  async checkVersion(req) {
    return { aiDetectionScore: await checkStoredVersion(deps, req.externalId, req.number) };
  },
});
