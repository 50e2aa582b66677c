// OriginalityCheckService: the detector's score of a version a client made after generation,
// recorded on that version (and on the article while it is current). The text scored is what a
// generated version's score is taken on: the body of the content without its images.
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { OriginalityCheckService } from "../../../proto/gen/articles/generation_runner/v1/originality_pb.ts";
import type { ArticleLifecycleService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { bodyOf } from "../../kit/src/article-envelope.ts";
import type { OriginalityDetector } from "./domain/originality.ts";

// An image's markdown: placed after the text was written, never part of what is scored.
const IMAGE = /!\[[^\]]*\]\([^)]*\)/g;

export interface OriginalityCheckDeps {
  detector: OriginalityDetector;
  versions: Client<typeof ArticleVersionService>;
  lifecycle: Client<typeof ArticleLifecycleService>;
}

export const originalityCheckHandlers = ({ detector, versions, lifecycle }: OriginalityCheckDeps): ServiceImpl<typeof OriginalityCheckService> => ({
  async checkVersion(req) {
    const { version } = await versions.getVersion({ externalId: req.externalId, number: req.number });
    const score = await detector.score(bodyOf(version!.content ?? "").replace(IMAGE, " "));
    await lifecycle.recordOriginality({ externalId: req.externalId, versionId: version!.id, aiDetectionScore: score });
    return { aiDetectionScore: score };
  },
});
