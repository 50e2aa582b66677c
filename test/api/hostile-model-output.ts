// Model output that tries to put markup on a site, for the publishing tests of every kind of
// destination: a heading with an escaped and a raw script, an image with onerror, a javascript:
// link in markdown and in HTML, an event handler, escaped markup in the text, an image's alt text
// and a link's title, and the same in the description (a post's excerpt), the request's title and
// a tag. Every payload calls `alert(`.
import { createArticle } from "../harness/articles.ts";
import type { ApiClient } from "../harness/http.ts";
import { articleBody, createWorkflow } from "./generation-support.ts";

export const HOSTILE_CONTENT = [
  `# Brewing &lt;script&gt;alert("title")&lt;/script&gt; <script>alert("h1")</script> at home`,
  "",
  `Intro <img src="x" onerror="alert('img')"> with a [plain link](javascript:alert('md')) and <a href="javascript:alert('a')">another</a>.`,
  "",
  `<script>alert("body")</script>`,
  "",
  `## Grinding <b onmouseover="alert('b')">beans</b>`,
  "",
  `Text &lt;script&gt;alert("escaped")&lt;/script&gt; stays text, and so do an image's alt text and a link's title:`,
  `![Crema &lt;script&gt;alert("alt")&lt;/script&gt;](https://images.example/crema.png) [more](https://example.com/ "&lt;script&gt;alert('title')&lt;/script&gt;")`,
].join("\n");

export const HOSTILE_DESCRIPTION = `Excerpt &lt;script&gt;alert("e")&lt;/script&gt; <script>alert("x")</script> <img src=x onerror=alert(1)> <a href="javascript:alert(2)">go</a>`;

/** An article of exactly that output (with one image), created to be published to `destinationId` with `status`. */
export async function createHostileArticle(api: ApiClient, projectId: number, destinationId: number, status: string): Promise<any> {
  const type = `hostile-${Date.now().toString(36)}`;
  // The simulator answers with the prompt itself ([[sim:echo]]): the article is exactly this envelope.
  await createWorkflow(api, projectId, type, [{ output_format: "json", user: `[[sim:echo]]${JSON.stringify({ article: { content: HOSTILE_CONTENT, meta_description: HOSTILE_DESCRIPTION } })}` }]);
  return createArticle(
    api,
    articleBody(projectId, {
      title: `Beans &lt;script&gt;alert("t")&lt;/script&gt; <img src=x onerror=alert(3)>`,
      article_type: type,
      image_count: 1,
      publish: { destination_id: destinationId, status, tags: [`<script>alert("tag")</script>roast`] },
    }),
  );
}
