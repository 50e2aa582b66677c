// The brief checks of one version as the runner stores it with the article: the article's brief,
// the version's text as delivered (envelope unwrapped, images not yet placed, citations resolved)
// and its description, measured by brief-checks.ts.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Article, GenerationSettings } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { bodyOf, envelopeOf } from "../../../kit/src/article-envelope.ts";
import type { QualityRepair, QualityReport } from "../../../kit/src/rules/quality-report.ts";
import { checkBrief } from "./brief-checks.ts";
import { citationStyleOf, type CitedText } from "./cited-writing.ts";

/** The report on a cited text of `article`, with the repairs made to it. */
export function reportOf(article: Article, settings: GenerationSettings, text: CitedText, description: string | null, repairs: readonly QualityRepair[] = []): QualityReport {
  const metaTitle = envelopeOf(text.content)?.article.meta_title;
  const report = checkBrief(
    {
      title: article.title,
      targetWordCount: article.targetWordCount,
      targetKeyword: article.targetKeyword,
      keywords: article.keywords,
      includeFaq: settings.includeFaq,
      language: article.language,
      citations: citationStyleOf(settings.citations),
    },
    {
      body: bodyOf(text.content),
      words: text.words,
      // What the completion webhook delivers as the meta title.
      metaTitle: typeof metaTitle === "string" ? metaTitle : article.title,
      metaDescription: description,
      cited: text.sources.flatMap((s) => (s.cited && s.number !== undefined ? [s.number] : [])),
      citationsRemoved: text.removed,
    },
  );
  return { ...report, repairs: [...repairs] };
}

/** The report in the shape the article-store keeps (a JSON object). */
export function qualityOf(article: Article, settings: GenerationSettings, text: CitedText, description: string | null, repairs: readonly QualityRepair[] = []): JsonObject {
  // Every value is JSON already (numbers, yes or no, strings, lists of strings, null).
  return reportOf(article, settings, text, description, repairs) as unknown as JsonObject;
}
