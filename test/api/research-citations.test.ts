// Sources a reader can check, through the whole stack: research articles carry the
// pages they were read from (GET, list, webhook, articles.api.v1), and with `citations` their text
// cites them. The bundled simulator, told to cite, cites every listed source but the last and, in
// its last paragraph, one number that was not a source (services/model-simulator/src/citing.ts),
// so each test knows exactly what a correct resolution leaves.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createArticle } from "../harness/articles.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { startWordPress, type WordPressSite } from "../harness/wordpress.ts";
import { articleMarker } from "../../services/webhook-dispatcher/src/publishing/wordpress.ts";
import { openEvents } from "./article-events-support.ts";
import { countWords } from "../../services/kit/src/words.ts";
import { articleBody, createWorkflow, finished, marker, runOf, simulatorCalls, waitForArticle, webhookReceiver, wordUsage, type WebhookReceiver } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;
let hooks: WebhookReceiver;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  hooks = webhookReceiver();
});

afterAll(() => hooks?.stop());

const research = (extra: Record<string, unknown>) => articleBody(tenant.projectId, { research_enabled: true, target_word_count: 300, ...extra });

// Inline citations as the runner writes them: [\[n\]](url).
const LINKED = /\[\\\[(\d+)\\\]\]\(([^)\s]+)\)/g;
// Plain citations: a run of [n], [n, m] or [n][m], not a link's text.
const BARE = /(?<![\]\\!\w])((?:\[\d{1,3}(?:\s*,\s*\d{1,3})*\])+)(?!\()/g;

/** The words the tenant's account has settled, once no reservation is left open (the files' tests run one at a time). */
async function settledWords(): Promise<number> {
  for (;;) {
    const usage = await wordUsage(stack, tenant.accountId);
    if (Number(usage.reservedWords) === 0) return Number(usage.usedWords);
    await Bun.sleep(100);
  }
}

/** The words a reader reads in a cited text: its links as their plain markers, without the Sources section. */
const readWords = (content: string) => countWords(content.split("\n## Sources\n\n")[0]!.replace(LINKED, "[$1]"));

/** The source numbers a text's plain citations name, in order. */
const numbersCited = (text: string): number[] => [...text.matchAll(BARE)].flatMap((m) => Array.from(m[1]!.matchAll(/\d+/g), (d) => Number(d[0])));

/** The search results the simulator gives the article's query, and which of them are stubs no one can read. */
async function searchResults(query: string): Promise<{ url: string; stub: boolean }[]> {
  const res = await fetch(`${stack.simulatorUrl}/search?format=json&q=${encodeURIComponent(query)}`);
  const body = (await res.json()) as { results: { url: string }[] };
  return body.results.map((r) => ({ url: r.url, stub: r.url.includes("--short-") }));
}

/** What every research article's sources must be, whatever its citations. */
function expectHonestSources(sources: any[], stubUrls: string[]) {
  expect(sources.length).toBeGreaterThanOrEqual(2);
  expect(sources.map((s) => s.number)).toEqual(sources.map((_, i) => i + 1));
  for (const s of sources) {
    expect(s.url).toStartWith(`${stack.simulatorUrl}/pages/`);
    expect(s.url).not.toContain("#");
    expect(new URL(s.url).username).toBe("");
    expect(s.title.length).toBeGreaterThan(0);
    expect(s.title).not.toMatch(/[<>]/);
    expect(s.site_name.length).toBeGreaterThan(0);
    expect(s.site_name).not.toMatch(/[<>]/);
    expect(Date.parse(s.fetched_at)).not.toBeNaN();
  }
  // The stub pages the search returned failed extraction: neither listed nor cited.
  expect(stubUrls.length).toBeGreaterThan(0);
  for (const stub of stubUrls) expect(sources.map((s) => s.url)).not.toContain(stub);
}

describe("sources on the article", () => {
  test("inline: every marker links to a listed source, the unknown number is dropped and counted, and the webhook says the same", async () => {
    const keyword = "aeropress inverted method";
    const settledBefore = await settledWords();
    const created = await createArticle(api, research({ title: "The inverted AeroPress method", target_keyword: keyword, citations: "inline", webhook_url: hooks.url }));
    // Published once its webhook is delivered: then the delivery is in hand too.
    const done = await waitForArticle(api, created.external_id, (a) => a.status === "published", 90_000);
    expect(done.citations).toBe("inline");
    expectHonestSources(done.sources, (await searchResults(keyword)).filter((r) => r.stub).map((r) => r.url));

    const n = done.sources.length;
    const links = [...done.content.matchAll(LINKED)].map((m) => ({ number: Number(m[1]), url: m[2] }));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.url).toBe(done.sources[link.number - 1].url);
    // The text cites sources 1 to n-1; the last was read but not cited; n+1 was invented and removed.
    expect(new Set(links.map((l) => l.number))).toEqual(new Set(done.sources.slice(0, -1).map((s: any) => s.number)));
    expect(done.sources.map((s: any) => s.cited)).toEqual(done.sources.map((_: any, i: number) => i < n - 1));
    expect(done.content.replace(LINKED, "")).not.toMatch(BARE);
    expect(done.content).not.toContain(`[${n + 1}]`);
    expect(done.citations_removed).toBe(1);
    expect(done.content).not.toContain("## Sources");
    // The words are the text's, not its links' addresses: what the article says and the account paid.
    expect(done.actual_word_count).toBe(readWords(done.content));
    expect((await settledWords()) - settledBefore).toBe(done.actual_word_count);

    // The list answers the same sources; the webhook carries them, and its HTML links to the pages.
    const listed = await api.get(`/v1/articles?project_id=${tenant.projectId}&per_page=100`);
    const inList = listed.body.data.find((a: any) => a.external_id === created.external_id);
    expect(inList.sources).toEqual(done.sources);
    expect(inList.citations_removed).toBe(1);
    const delivery = hooks.received.find((r) => r.body?.data?.external_id === created.external_id);
    expect(delivery).toBeDefined();
    expect(delivery!.body.data.sources).toEqual(done.sources);
    expect(delivery!.body.data.citations_removed).toBe(1);
    for (const s of done.sources.slice(0, -1)) expect(delivery!.body.content.html).toContain(`<a href="${s.url}">[${s.number}]</a>`);

    // The live stream announced each page as it was read, with its site's name as the article lists it.
    const log = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: "0-0" });
    await log.done;
    const announced = log.events.filter((e) => e.event === "source").map((e) => ({ url: e.data.url, site_name: e.data.site_name }));
    expect(announced.sort((a, b) => a.url.localeCompare(b.url))).toEqual(done.sources.map((s: any) => ({ url: s.url, site_name: s.site_name })).sort((a: any, b: any) => a.url.localeCompare(b.url)));

    // The cost breakdown keeps its shape: research is one line, as before.
    const steps = await api.get(`/v1/articles/${created.external_id}/steps`);
    expect(Object.keys(steps.body.data.research).sort()).toEqual(["cost", "finished_at", "query", "sources"]);
    expect(steps.body.data.research.sources).toBe(n);
  }, 120_000);

  test("an article without research has no sources, and asking for citations without research is refused", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Descaling a kettle" }));
    const done = await waitForArticle(api, created.external_id, finished, 60_000);
    expect(done.sources).toEqual([]);
    expect(done.citations).toBe("none");
    expect(done.citations_removed).toBe(0);

    const unknown = await api.post("/v1/articles", research({ citations: "footnotes" }));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.citations[0]).toContain("none, inline, list");
    const withoutResearch = await api.post("/v1/articles", articleBody(tenant.projectId, { citations: "list" }));
    expect(withoutResearch.status).toBe(422);
    expect(withoutResearch.body.errors.citations).toEqual(["The citations list need research_enabled: without research there are no sources to cite."]);
  }, 90_000);
});

describe("citations over gRPC (articles.api.v1)", () => {
  const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
  let articles: any;

  beforeAll(() => {
    const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const pkg: any = grpc.loadPackageDefinition(definition);
    articles = new pkg.articles.api.v1.ArticleService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
  });

  afterAll(() => articles?.close());

  const call = (method: string, request: object) =>
    new Promise<any>((resolve, reject) => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${tenant.token}`);
      articles[method](request, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply)));
    });

  test("list: a Sources section lists every source read, each marker names a listed number, the unknown one is dropped and counted", async () => {
    const keyword = "moka pot pressure";
    const created = await call("CreateArticle", {
      article: { project_id: String(tenant.projectId), title: "How a moka pot builds pressure", article_type: "blog_post", target_word_count: 300, tone: "friendly", point_of_view: "second_person", language: "en", target_keyword: keyword, research_enabled: true, citations: "list" },
    });
    const id = created.article.external_id;
    await waitForArticle(api, id, finished, 90_000);
    const { article } = await call("GetArticle", { id });
    expect(article.citations).toBe("list");
    const sources = article.sources.map((s: any) => ({ ...s, fetched_at: new Date(Number(s.fetched_at.seconds) * 1000).toISOString() }));
    expectHonestSources(sources, (await searchResults(keyword)).filter((r) => r.stub).map((r) => r.url));
    const n = sources.length;

    const [body, section] = article.content.split("\n## Sources\n\n");
    expect(section).toBeDefined();
    // One line per source read, in number order, its title linked to the page it names.
    const lines = section.trim().split("\n");
    expect(lines.map((l: string) => Number(/^(\d+)\. /.exec(l)?.[1]))).toEqual(sources.map((s: any) => s.number));
    lines.forEach((line: string, i: number) => {
      expect(line).toContain(`](${sources[i].url})`);
      expect(line).toEndWith(` — ${sources[i].site_name.replace(/([\\`*_{}[\]()#+\-.!|<>~&])/g, "\\$1")}`);
    });
    const markers = numbersCited(body);
    expect(markers.length).toBeGreaterThan(0);
    for (const m of markers) expect(m >= 1 && m <= n).toBe(true);
    expect(new Set(markers)).toEqual(new Set(sources.slice(0, -1).map((s: any) => s.number)));
    expect(sources.map((s: any) => s.cited)).toEqual(sources.map((_: any, i: number) => i < n - 1));
    expect(article.citations_removed).toBe(1);
    // The Sources section costs no words.
    expect(Number(article.actual_word_count)).toBe(countWords(body));
  }, 120_000);
});

describe("a humanize pass", () => {
  test("keeps the citations: both versions resolve against the sources, and the article says what the humanized text cites", async () => {
    const keyword = "chemex filter paper";
    const settledBefore = await settledWords();
    const created = await createArticle(api, research({ title: "Why Chemex filters are thick", target_keyword: keyword, citations: "list", humanize: true }));
    const done = await waitForArticle(api, created.external_id, finished, 120_000);
    expect(done.status).toBe("completed");
    expect(done.content).not.toBe(done.original_content);
    const n = done.sources.length;
    for (const version of [done.original_content, done.content]) {
      const [body, section] = version.split("\n## Sources\n\n");
      expect(section.trim().split("\n")).toHaveLength(n);
      const markers = numbersCited(body);
      expect(new Set(markers)).toEqual(new Set(done.sources.slice(0, -1).map((s: any) => s.number)));
    }
    // The humanize prompt was told to keep them.
    const { calls } = await simulatorCalls(stack, "Rewrite the article below");
    const prompt = calls.map((c) => c.prompt).find((p) => p.includes("Why Chemex filters are thick"))!;
    expect(prompt).toContain("Keep every bracketed source number");
    expect(done.sources.map((s: any) => s.cited)).toEqual(done.sources.map((_: any, i: number) => i < n - 1));
    expect(done.citations_removed).toBe(1);
    // The humanized text's words, without its Sources section, are the article's and what was settled.
    expect(done.actual_word_count).toBe(readWords(done.content));
    expect((await settledWords()) - settledBefore).toBe(done.actual_word_count);
  }, 150_000);
});

describe("custom workflows and batch mode", () => {
  test("{sources} lists the numbered pages; a batched single step keeps its citations", async () => {
    const type = marker("cited");
    await createWorkflow(api, tenant.projectId, type, [
      { user: "Write an article of about {target_word_count} words titled {title}.\nSources you may cite:\n{sources}", include_research: true },
    ]);
    const keyword = "cold brew concentrate";
    const created = await createArticle(api, research({ title: "Cold brew concentrate ratios", article_type: type, target_keyword: keyword, model: "simulator:sim-batch", use_batch_api: true, status: "batching", citations: "list" }));
    const done = await waitForArticle(api, created.external_id, finished, 120_000);
    expect(done.status).toBe("completed");
    const run = await runOf(stack, created.external_id);
    expect(run!.steps[0]!.batched).toBe(true);

    // The prompt carried {sources}: one "[n] Title (Site) — URL" line per source.
    const { calls } = await simulatorCalls(stack, "Sources you may cite:");
    const prompt = calls.map((c) => c.prompt).find((p) => p.includes("Cold brew concentrate ratios"))!;
    for (const s of done.sources) expect(prompt).toContain(`[${s.number}] ${s.title} (${s.site_name}) — ${s.url}`);
    expect(done.content).toContain("\n## Sources\n\n1. [");
    expect(done.citations_removed).toBe(1);
    expect(done.sources.filter((s: any) => s.cited).length).toBe(done.sources.length - 1);
  }, 150_000);
});

// Byte-identity of content for clients that did not ask for citations. The content is what the
// simulator writes for the prompts it is sent, which carry the simulator's address (a free port),
// and so do the earlier steps' outputs they quote. The proof has two halves: (1) the prompts a
// citations-none research article sends, with those put back as their placeholders, hash to what
// the runner sent before citations existed (PROMPTS_BEFORE_CITATIONS: this recipe run on the tree
// of commit f740809, whose runner had no citations code, twice, on different ports, same hash),
// and (2) the stored content is the last step's output exactly as the model returned it.
const PROMPTS_BEFORE_CITATIONS = "a9351951e5219c64f7f4928e6a5839144a0cac7d586fd5184012ab2a121a489c";

/**
 * The article's prompts as the runner built them: each earlier step's output (the model's text,
 * seeded by prompts that carry the simulator's address) put back as its {step_N_output}, and the
 * address as {simulator}; hashed.
 */
async function promptsFingerprint(s: TestStack, externalId: string, title: string): Promise<string> {
  const run = await runOf(s, externalId);
  const outputs = run!.steps.map((step) => ({ text: step.output, name: `{step_${step.stepNumber}_output}` })).sort((a, b) => b.text.length - a.text.length);
  const { calls } = await simulatorCalls(s, title);
  const prompts = calls.filter((c) => !isFinishingPrompt(c.prompt)).map((c) => outputs.reduce((p, o) => p.replaceAll(o.text, o.name), c.prompt).replaceAll(s.simulatorUrl!, "{simulator}")).sort();
  return createHash("sha256").update(JSON.stringify(prompts)).digest("hex");
}

/**
 * The prompts of the finishing work after the workflow's steps (length control's extend and
 * tighten calls, length-control.ts; the brief repairs, brief-repairs.ts), which came after
 * citations did: their second line says what they ask.
 */
const isFinishingPrompt = (prompt: string) =>
  /^(Write about \d+ words of new paragraphs for one section|Rewrite one section of this article|Language \S+, .* tone\.)/.test(prompt.split("\n")[1] ?? "");

const UNCITED_RECIPE = { title: "Grind size for a French press", target_keyword: "french press grind size", target_word_count: 300, research_enabled: true };

describe("citations none", () => {
  test("leaves content byte-identical to what it was before citations existed", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, UNCITED_RECIPE));
    const done = await waitForArticle(api, created.external_id, finished, 90_000);
    expect(done.status).toBe("completed");
    expect(done.citations).toBe("none");
    expect(await promptsFingerprint(stack, created.external_id, UNCITED_RECIPE.title)).toBe(PROMPTS_BEFORE_CITATIONS);
    const run = await runOf(stack, created.external_id);
    const last = run!.steps.reduce((a, b) => (a.stepNumber > b.stepNumber ? a : b));
    // Without finishing calls the content is the last step's output exactly; with them (length
    // control, brief repairs: their own tests show what they change), it is what they made of it.
    const finishing = (await api.get(`/v1/articles/${created.external_id}/steps`)).body.data.finishing;
    if (finishing.length === 0) expect(done.content).toBe(last.output);
    expect(done.original_content).toBe(done.content);
    expect(done.actual_word_count).toBe(countWords(done.content));
    // Sources are listed all the same, none cited.
    expect(done.sources.length).toBeGreaterThan(0);
    expect(done.sources.every((s: any) => !s.cited)).toBe(true);
    expect(done.citations_removed).toBe(0);

    // Saying "none" is not asking: the same prompts again (each seen twice now), the same content.
    const again = await createArticle(api, articleBody(tenant.projectId, { ...UNCITED_RECIPE, citations: "none" }));
    const second = await waitForArticle(api, again.external_id, finished, 90_000);
    expect(second.content).toBe(done.content);
    expect(await promptsFingerprint(stack, created.external_id, UNCITED_RECIPE.title)).toBe(PROMPTS_BEFORE_CITATIONS);
  }, 180_000);
});

describe("publishing cited articles to WordPress", () => {
  let site: WordPressSite;
  let destinationId: number;

  beforeAll(async () => {
    site = await startWordPress();
    const created = await api.post(`/v1/projects/${tenant.projectId}/destinations`, {
      kind: "wordpress",
      name: "Cited blog",
      site_url: site.url,
      username: site.username,
      application_password: site.applicationPassword,
    });
    expect(created.status).toBe(201);
    destinationId = created.body.data.id;
  }, 90_000);

  afterAll(async () => {
    await site?.stop();
  });

  async function postOf(externalId: string): Promise<any> {
    const url = new URL(site.restRoot);
    const route = "/wp/v2/posts";
    if (url.searchParams.has("rest_route")) url.searchParams.set("rest_route", route);
    else url.pathname += route.slice(1);
    url.searchParams.set("status", "any");
    url.searchParams.set("context", "edit");
    const response = await fetch(url, { headers: { authorization: `Basic ${btoa(`${site.username}:${site.applicationPassword}`)}` } });
    const posts = (await response.json()) as any[];
    return posts.find((p) => p.content.raw.includes(articleMarker(externalId)));
  }

  const published = (a: any) => a.publications.some((p: any) => p.destination_id === destinationId && ["published", "failed"].includes(p.state));

  test("inline citations are links to the sources, and a list's Sources section is HTML with the same links", async () => {
    const [inline, list] = await Promise.all(
      (["inline", "list"] as const).map((citations) =>
        createArticle(api, research({ title: `Espresso tamping pressure, ${citations}`, target_keyword: "espresso tamping pressure", citations, publish: { destination_id: destinationId, status: "publish" } })),
      ),
    );
    const [inlineDone, listDone] = await Promise.all([inline, list].map((a) => waitForArticle(api, a.external_id, published, 150_000)));
    for (const done of [inlineDone, listDone]) expect(done.publications[0].state).toBe("published");

    const inlinePost = await postOf(inlineDone.external_id);
    const hrefs = [...inlinePost.content.raw.matchAll(/<a href="([^"]+)">\[(\d+)\]<\/a>/g)].map((m: any) => ({ url: m[1], number: Number(m[2]) }));
    expect(hrefs.length).toBeGreaterThan(0);
    for (const h of hrefs) expect(h.url).toBe(inlineDone.sources[h.number - 1].url);

    const listPost = await postOf(listDone.external_id);
    const html: string = listPost.content.raw;
    expect(html).toMatch(/<h2[^>]*>Sources<\/h2>/);
    const section = html.slice(html.search(/<h2[^>]*>Sources<\/h2>/));
    for (const s of listDone.sources) expect(section).toContain(`<a href="${s.url}">`);
    expect(section).not.toMatch(/<script/i);
  }, 240_000);
});
