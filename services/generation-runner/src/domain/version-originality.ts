// The originality check of a version made after generation's own (an edit), or owed by one whose
// check was lost (a run that died after completing, an edit whose check request failed): its
// score recorded on the version (and on the article while it is current), with the version's brief
// checks when it has none yet. One way to score, whoever asks: the body of the content without its
// images, the text generation scores before it places them.
import type { Client } from "@connectrpc/connect";
import type { Article, ArticleLifecycleService } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { bodyOf } from "../../../kit/src/article-envelope.ts";
import type { CitedText } from "./cited-writing.ts";
import type { OriginalityDetector } from "./originality.ts";
import { qualityOf } from "./quality-report.ts";

// An image's markdown: placed after the text was written, never part of what is scored.
const IMAGE = /!\[[^\]]*\]\([^)]*\)/g;

export interface CheckedVersion {
  id: bigint;
  text: CitedText;
  description: string | null;
  /** Whether the version has its brief checks already (generation measures its own). */
  hasQuality: boolean;
}

/** Scores `version` of `article` (undefined when it could not be read) and records the score; the score. */
export async function checkVersionOriginality(
  deps: { detector: OriginalityDetector; lifecycle: Client<typeof ArticleLifecycleService> },
  externalId: string,
  article: Article | undefined,
  version: CheckedVersion,
): Promise<number> {
  const score = await deps.detector.score(bodyOf(version.text.content).replace(IMAGE, " "));
  const quality = !version.hasQuality && article?.settings ? qualityOf(article, article.settings, version.text, version.description) : undefined;
  await deps.lifecycle.recordOriginality({ externalId, versionId: version.id, aiDetectionScore: score, quality });
  return score;
}
