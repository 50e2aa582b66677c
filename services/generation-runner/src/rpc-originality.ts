// OriginalityCheckService: the detector's score of a version a client made after generation (an
// edit, a restore, a section revision), recorded on that version (and on the article while it is current), with the
// version's brief checks (quality-report.ts) measured against the article's brief as generation
// measures its own versions: checks and report only, never a repair. The text scored is what a
// generated version's score is taken on: the body of the content without its images.
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { OriginalityCheckService } from "../../../proto/gen/articles/generation_runner/v1/originality_pb.ts";
import type { Article, ArticleLifecycleService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { bodyOf } from "../../kit/src/article-envelope.ts";
import type { OriginalityDetector } from "./domain/originality.ts";
import { qualityOf } from "./domain/quality-report.ts";

// An image's markdown: placed after the text was written, never part of what is scored.
const IMAGE = /!\[[^\]]*\]\([^)]*\)/g;

export interface OriginalityCheckDeps {
  detector: OriginalityDetector;
  versions: Client<typeof ArticleVersionService>;
  lifecycle: Client<typeof ArticleLifecycleService>;
  readArticle(externalId: string): Promise<Article | undefined>;
}

/** Scores version `number` of the article and measures its brief checks, recording both; the score. */
export async function checkVersionOriginality({ detector, versions, lifecycle, readArticle }: OriginalityCheckDeps, externalId: string, number: number): Promise<number> {
  const [{ version }, article] = await Promise.all([versions.getVersion({ externalId, number }), readArticle(externalId)]);
  const content = version!.content ?? "";
  const score = await detector.score(bodyOf(content).replace(IMAGE, " "));
  const text = { content, words: version!.wordCount, sources: version!.sources, removed: version!.citationsRemoved };
  const quality = article?.settings ? qualityOf(article, article.settings, text, version!.description ?? null) : undefined;
  await lifecycle.recordOriginality({ externalId, versionId: version!.id, aiDetectionScore: score, quality });
  return score;
}

export const originalityCheckHandlers = (deps: OriginalityCheckDeps): ServiceImpl<typeof OriginalityCheckService> => ({
  async checkVersion(req) {
    return { aiDetectionScore: await checkVersionOriginality(deps, req.externalId, req.number) };
  },
});
