// blog_post: a useful, readable post that answers what the searcher came for.
import { genrePipeline, outlineSection, listOf, strictObject, text } from "./genre-pipeline.ts";

export const blogPost = genrePipeline({
  article_type: "blog_post",
  name: "Blog post",
  description: "Researched blog post: research notes, outline, draft, meta description, final polish.",
  label: "blog post",
  writer: "an experienced blog writer who turns solid research into useful, readable posts",
  research_focus:
    "Pull out what a reader searching this topic needs: direct answers, practical tips, concrete examples, useful numbers, and common mistakes or misconceptions.",
  outline_plan: `How to plan this blog post:
- Write a hook that names the reader's problem or question in one or two sentences.
- Order 4 to 8 body sections so that each answers the next question a reader would naturally ask.
- Close with the main answer in brief and one practical next step for the reader.`,
  outline_schema: strictObject({ title: text, hook: text, sections: listOf(outlineSection), conclusion: text }),
  draft_structure: `Structure for this blog post:
- Introduction (2 to 4 short paragraphs): open with the reader's problem or question, say what the post covers, and deliver the first useful point quickly.
- Body: one ## section per outline section, in short paragraphs of 2 to 4 sentences, with concrete examples, steps or numbers from the notes rather than generalities.
- Conclusion: restate the main answer in a few sentences and end with one practical next step.`,
  polish_checks:
    "the introduction earns the reader's attention within its first two sentences, each section delivers what its heading promises, and the conclusion ends on a clear next step.",
  meta_angle: "Name the main benefit or answer the post delivers.",
});
