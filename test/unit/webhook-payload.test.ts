// The completion webhook's body (spec 6): the public article record, the unwrapped body as
// markdown and sanitised HTML, and the seo block.
import { describe, expect, test } from "bun:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ArticleSchema, type Article } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { Marked } from "marked";
import { completionPayload, parseMarkdown, renderHtml, unwrapBody } from "../../services/webhook-dispatcher/src/domain/completion-payload.ts";
import { writeArticle } from "../../services/model-simulator/src/writer.ts";

const created = new Date("2030-05-01T10:00:00.000Z");
const updated = new Date("2030-05-01T10:03:30.000Z");

/** The fields of an article as plain values (nested messages too). */
type ArticleFields = Exclude<MessageInitShape<typeof ArticleSchema>, Article>;

function article(overrides: Partial<ArticleFields> = {}): Article {
  return create(ArticleSchema, {
    id: 41n,
    externalId: "0e5b5a8c-3f0e-4d6f-9c43-7a1d2b3c4d5e",
    projectId: 9n,
    accountId: 3n,
    title: "Growing tomatoes on a balcony",
    description: "A short guide to balcony tomatoes.",
    content: "# Growing tomatoes\n\nStart with **good soil**.\n\n- water daily\n- full sun",
    originalContent: "# Growing tomatoes\n\nStart with **good soil**.",
    currentVersionId: 77n,
    status: "completed",
    articleType: "blog_post",
    targetKeyword: "balcony tomatoes",
    keywords: ["tomatoes", "balcony garden"],
    targetWordCount: 800,
    actualWordCount: 812,
    tone: "friendly",
    pointOfView: "second_person",
    language: "en",
    countryTargeting: "GB",
    aiModelUsed: "simulator:sim-fast",
    cost: "0.0042",
    humanize: false,
    aiDetectionScore: 12,
    originalityCheckedAt: timestampFromDate(updated),
    webhookUrl: "https://hooks.example.com/articles",
    createdAt: timestampFromDate(created),
    updatedAt: timestampFromDate(updated),
    ...overrides,
  });
}

const project = { id: 9n, name: "Garden blog" };

describe("completionPayload", () => {
  test("has exactly the four blocks of spec 6", () => {
    const payload = completionPayload(article(), project);
    expect(Object.keys(payload).sort()).toEqual(["content", "data", "seo", "success"]);
    expect(payload.success).toBe(true);
  });

  test("data is the full public article record of spec 2.2", () => {
    const { data } = completionPayload(article(), project);
    expect(Object.keys(data).sort()).toEqual(
      [
        "id", "external_id", "title", "description", "content", "original_content", "current_version_id",
        "published_version_id", "status", "article_type", "target_keyword", "keywords", "target_word_count",
        "actual_word_count", "tone", "point_of_view", "language", "country_targeting", "ai_model_used", "cost",
        "current_step", "humanize", "ai_detection_score", "originality_checked_at", "additional_context",
        "webhook_url", "project", "created_at", "updated_at", "images", "failure_reason", "publications",
        "sources", "citations", "citations_removed", "quality",
      ].sort(),
    );
    expect(data).toMatchObject({
      id: 41,
      external_id: "0e5b5a8c-3f0e-4d6f-9c43-7a1d2b3c4d5e",
      status: "completed",
      current_version_id: 77,
      published_version_id: null,
      keywords: ["tomatoes", "balcony garden"],
      current_step: null,
      project: { id: 9, name: "Garden blog" },
      created_at: "2030-05-01T10:00:00.000Z",
      updated_at: "2030-05-01T10:03:30.000Z",
      originality_checked_at: "2030-05-01T10:03:30.000Z",
      additional_context: null,
      cost: "0.0042",
      // Completed before the brief checks existed: no report.
      quality: null,
    });
    // Internal fields of the store never leave the service.
    expect(JSON.stringify(data)).not.toContain("account_id");
    expect(JSON.stringify(data)).not.toContain("settings");
  });

  test("data carries the quality report as the store keeps it", () => {
    const quality = { checks: [{ name: "length", status: "failed", value: 612, target: "720–880 words" }], repairs: [] };
    expect(completionPayload(article({ quality }), project).data.quality).toEqual(quality as never);
  });

  test("content carries the markdown body, its sanitised HTML and the meta fields", () => {
    const { content } = completionPayload(article(), project);
    expect(content.format).toBe("markdown");
    expect(content.markdown).toBe("# Growing tomatoes\n\nStart with **good soil**.\n\n- water daily\n- full sun");
    expect(content.html).toContain("<h1>Growing tomatoes</h1>");
    expect(content.html).toContain("<strong>good soil</strong>");
    expect(content.html).toContain("<li>water daily</li>");
    expect(content.meta_title).toBe("Growing tomatoes on a balcony");
    expect(content.meta_description).toBe("A short guide to balcony tomatoes.");
  });

  test("a JSON envelope is unwrapped: html and markdown are the body at article.content", () => {
    const envelope = JSON.stringify({
      article: { content: "## Soil\n\nUse *compost*.", meta_title: "Balcony tomatoes", meta_description: "Grow them well." },
    });
    const { content, data } = completionPayload(article({ content: envelope }), project);
    expect(content.format).toBe("json");
    expect(content.markdown).toBe("## Soil\n\nUse *compost*.");
    expect(content.html).toContain("<h2>Soil</h2>");
    expect(content.html).toContain("<em>compost</em>");
    expect(content.html).not.toContain("meta_title");
    expect(content.meta_title).toBe("Balcony tomatoes");
    expect(content.meta_description).toBe("Grow them well.");
    // data.content stays what the API shows: the stored envelope.
    expect(data.content).toBe(envelope);
  });

  test("seo repeats the article's targeting and counts", () => {
    const { seo } = completionPayload(article(), project);
    expect(seo).toEqual({
      target_keyword: "balcony tomatoes",
      keywords: ["tomatoes", "balcony garden"],
      language: "en",
      country_targeting: "GB",
      word_count: 812,
      ai_detection_score: 12,
    });
  });

  test("absent optional values are null, never missing", () => {
    const bare = article({ targetKeyword: undefined, countryTargeting: undefined, aiDetectionScore: undefined, description: undefined, keywords: [] });
    const payload = completionPayload(bare, project);
    expect(payload.seo).toEqual({ target_keyword: null, keywords: [], language: "en", country_targeting: null, word_count: 812, ai_detection_score: null });
    expect(payload.data.description).toBeNull();
    expect(payload.content.meta_description).toBe("");
  });
});

describe("article images", () => {
  const url = "https://api.example.com/images/0123456789abcdef0123456789abcdef.png";
  const images = [{ position: 1, url, alt: "Balcony tomatoes", width: 1536, height: 1024, aspectRatio: "16:9", imageId: "0123456789abcdef0123456789abcdef", mediaType: "image/png" }];

  test("the article's images get their width and height in the HTML, still sanitised", () => {
    const body = `# Growing tomatoes\n\nIntro.\n\n![Balcony tomatoes](${url})\n\n## Soil\n\nUse compost. <img src="${url}" onerror="alert(1)">`;
    const { content, data } = completionPayload(article({ content: body, images }), project);
    expect(content.html).toContain(`<img src="${url}" alt="Balcony tomatoes" width="1536" height="1024" />`);
    expect(content.html).not.toContain("onerror");
    expect(data.images).toEqual([{ url, alt: "Balcony tomatoes", width: 1536, height: 1024, aspect_ratio: "16:9", position: 1 }]);
  });

  test("another image in the body is kept without a size of its own making", () => {
    const html = renderHtml("![x](https://elsewhere.test/a.png)", images);
    expect(html).toBe('<p><img src="https://elsewhere.test/a.png" alt="x" /></p>\n');
  });
});

describe("unwrapBody", () => {
  test("plain markdown, even when it opens with a brace, is markdown", () => {
    expect(unwrapBody("Hello")).toEqual({ format: "markdown", markdown: "Hello" });
    expect(unwrapBody("{curly} start of prose")).toEqual({ format: "markdown", markdown: "{curly} start of prose" });
  });

  test("JSON without an article.content string is kept whole", () => {
    const doc = JSON.stringify({ sections: ["a", "b"] });
    expect(unwrapBody(doc)).toEqual({ format: "json", markdown: doc });
  });
});

describe("renderHtml", () => {
  test("removes script, event handlers and javascript: links from model output", () => {
    const html = renderHtml('Hi <script>alert(1)</script> <img src="https://x.test/a.png" onerror="alert(2)"> [x](javascript:alert(3)) <iframe src="https://evil.test"></iframe>');
    expect(html).not.toContain("<script");
    expect(html).not.toContain("alert(1)");
    expect(html).not.toContain("onerror");
    expect(html).not.toContain("javascript:");
    expect(html).not.toContain("<iframe");
    expect(html).toContain('<img src="https://x.test/a.png" />');
  });

  test("keeps ordinary article markup: headings, lists, tables, links, code", () => {
    const html = renderHtml("# T\n\n1. one\n2. two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[site](https://example.com) `code`");
    for (const tag of ["<h1>T</h1>", "<ol>", "<table>", "<td>1</td>", '<a href="https://example.com">site</a>', "<code>code</code>"]) {
      expect(html).toContain(tag);
    }
  });
});

describe("parseMarkdown", () => {
  const marked = new Marked({ gfm: true, async: false });
  const documents = [
    writeArticle({ title: "Balcony tomatoes", topic: "balcony tomatoes", keywords: ["tomatoes", "soil"], words: 900, seed: "payload" }),
    "A paragraph\nover lines  \nwith a hard break\n\n- - -\n\n***\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n> a quote\n> - in a list\n>   continued\n",
    "1. one\n2. two\n   - nested *em* and **strong**\n\n```ts\nconst x = 1;\n```\n\n    indented code\n\n<div>html</div>\n\n![alt](https://x.test/a.png) [link](https://x.test) <https://auto.test>\n- [ ] task\n~~gone~~",
    // Bodies that may underline: parsed with the rule, setext headings and all.
    "Setext heading\n===\n\nAnother one\n---\n\nText.",
    "> Quoted heading\n> ---\n\n- item\n  text\n  ===\n",
    "Windows lines\r\n---\r\nbody",
    "A paragraph\n\n---\n\n```\ncode\n---\n```\nTrailing text\n-",
  ];

  test.each(documents.map((d, i) => [i, d] as const))("renders document %d exactly as marked with GFM does", (_i, doc) => {
    expect(parseMarkdown(doc)).toBe(marked.parse(doc) as string);
  });

  test("setext headings still become headings", () => {
    expect(parseMarkdown("Title\n===\n\nPart\n---\n")).toBe("<h1>Title</h1>\n<h2>Part</h2>\n");
  });
});
