// product_review: an evidence-based verdict; specifications and test results come only from sources.
import { genrePipeline, listOf, outlineSection, strictObject, text, textList } from "./genre-pipeline.ts";

export const productReview = genrePipeline({
  article_type: "product_review",
  name: "Product review",
  description: "Evidence-based product review with verdict, pros and cons, who it is for, and a reasoned rating.",
  label: "product review",
  writer: "a product reviewer trusted for fair, evidence-based verdicts",
  research_focus:
    "Pull out the product's documented specifications, price and availability (with dates), the maker's claims, results of hands-on tests or measurements, recurring praise and complaints from users and other reviewers, and the closest alternatives. Keep the maker's claims apart from independent findings.",
  outline_plan: `How to plan this product review:
- Summarise the verdict in one or two sentences, with who the product is for.
- Choose the aspects that matter for this kind of product (for example design, performance, features, ease of use, support, value) and plan one section per aspect, weighing the evidence in the notes.
- List pros and cons that are concrete and supported by the notes.
- Say who should buy it and who should look elsewhere.
- Explain the reasoning behind the rating in terms of the aspects; the rating follows the evidence, not the other way round.`,
  outline_schema: strictObject({
    title: text,
    product_name: text,
    verdict: text,
    aspects: listOf(outlineSection),
    pros: textList,
    cons: textList,
    best_for: textList,
    not_for: textList,
    rating_rationale: text,
  }),
  draft_structure: `Structure for this product review:
- Verdict up front: two or three sentences with the overall judgement and who the product is for.
- Overview: what the product is, its price and availability as the notes give them, and where it sits among alternatives.
- Aspect sections: one ## section per evaluated aspect, weighing the evidence from the notes.
- Pros and cons: two bulleted lists of concrete, specific entries.
- Who it is for, and who should skip it.
- Rating: a score out of 5 with its rationale, tied to the aspects above.
Specifications, prices, benchmark figures and test results come only from the notes or the background; never invent them, and when a detail is unknown, say so or leave it out. Do not claim first-hand testing unless the background describes it.`,
  polish_checks:
    "the verdict, the pros and cons and the rating agree with one another; every specification, price and test figure appears in the notes or the background; the maker's claims are presented as claims; no first-hand testing is claimed without support.",
  meta_angle: "Give the gist of the verdict and who the product suits.",
});
