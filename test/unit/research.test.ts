// Research: extraction from realistic pages, word limits, domain rules, source selection, and
// the two search clients, all against real local HTTP servers (no network).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { braveProvider } from "../../services/generation-runner/src/research/brave.ts";
import {
  DEFAULT_EXCLUDED_DOMAINS,
  domainAllowed,
  isValidDomain,
} from "../../services/kit/src/rules/research-domains.ts";
import { extractMainText } from "../../services/generation-runner/src/research/extract.ts";
import { createPageFetcher } from "../../services/generation-runner/src/research/page-fetcher.ts";
import { searchProviderFromEnv } from "../../services/generation-runner/src/research/providers.ts";
import {
  gatherResearch,
  renderResearch,
  type FetchPage,
  type ResearchSource,
} from "../../services/generation-runner/src/research/research.ts";
import {
  SearchProviderError,
  type SearchOutcome,
  type SearchProvider,
} from "../../services/generation-runner/src/research/search-provider.ts";
import { searxngProvider } from "../../services/generation-runner/src/research/searxng.ts";
import { countWords, truncateWords } from "../../services/kit/src/words.ts";

// ---------------------------------------------------------------------------------------------
// Realistic pages
// ---------------------------------------------------------------------------------------------

const newsArticleHtml = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>City council approves riverside solar farm | The Daily Planet</title>
  <link rel="canonical" href="/2024/05/city-council-approves-riverside-solar-farm">
  <script>window.dataLayer = []; function track(){}</script>
  <style>.ad-slot{height:250px}</style>
</head>
<body class="article-page">
  <div id="cookie-banner" class="cookie-consent">
    <p>We use cookies to personalise content and ads. Accept all cookies or manage your preferences in our privacy centre.</p>
    <button>Accept all cookies</button>
  </div>
  <header class="site-header">
    <a class="logo" href="/">The Daily Planet</a>
    <nav class="main-menu"><ul><li><a href="/world">World</a></li><li><a href="/politics">Politics</a></li><li><a href="/business">Business</a></li><li><a href="/sport">Sport</a></li></ul></nav>
  </header>
  <div class="ad-slot leaderboard">SPONSORED: Cheap flights to anywhere, book today and save up to seventy percent on your next holiday</div>
  <div class="layout">
    <main>
      <article>
        <header>
          <h1>City council approves riverside solar farm</h1>
          <p class="byline">By Lois Lane, Environment Correspondent</p>
        </header>
        <p>The city council voted nine to two on Tuesday night to approve a twelve megawatt solar farm on former industrial land beside the river, ending a two year debate over how the site should be redeveloped.</p>
        <p>The project, backed by a cooperative of local residents, will cover roughly forty acres and is expected to supply enough electricity for about three thousand homes once it is connected to the grid next spring.</p>
        <div class="ad-inline">Advertisement: Upgrade your kitchen with our spring sale, visit the showroom this weekend</div>
        <p>Supporters said the scheme would cut the city's carbon emissions and bring rental income from land that has been empty since the steelworks closed. Opponents argued that the site should have been used for housing, given the shortage of affordable homes in the area.</p>
        <h2>Concerns about wildlife</h2>
        <p>Several residents raised concerns about the effect on birds that nest along the riverbank. The developer has agreed to leave a thirty metre buffer of meadow along the water and to plant native hedgerows around the panels.</p>
        <p>Construction is scheduled to begin in August and will take about seven months. The council will receive an annual payment that officials estimate at two hundred thousand pounds over the twenty five year lease.</p>
        <div class="share-bar"><a href="#">Share on Facebook</a><a href="#">Share on X</a><a href="#">Email this story</a></div>
      </article>
      <section id="comments" class="comments-area">
        <h3>12 comments</h3>
        <div class="comment"><p>Great article, thanks for covering the local news properly for once.</p></div>
        <div class="comment"><p>Why not put the panels on warehouse roofs instead of green land?</p></div>
      </section>
    </main>
    <aside class="sidebar">
      <h3>Most read this week</h3>
      <ol><li><a href="/a">Mayor opens new library</a></li><li><a href="/b">Bus fares to rise in June</a></li><li><a href="/c">Local bakery wins national award</a></li></ol>
      <div class="newsletter-signup"><p>Subscribe to our newsletter for the morning briefing.</p><form><input type="email"><button>Sign up</button></form></div>
    </aside>
  </div>
  <footer class="site-footer"><p>© 2024 The Daily Planet. All rights reserved. Terms of use. Privacy policy.</p></footer>
</body>
</html>`;

const tutorialHtml = `<!doctype html>
<html>
<head><title>How to brew pour-over coffee: a step by step guide - Brew School</title></head>
<body>
  <nav class="topbar"><a href="/">Brew School</a> <a href="/guides">Guides</a> <a href="/shop">Shop</a> <a href="/login">Log in</a></nav>
  <div class="container">
    <nav class="toc"><h4>On this page</h4><ul><li><a href="#gear">Gear</a></li><li><a href="#steps">Steps</a></li></ul></nav>
    <div class="post-body">
      <h1>How to brew pour-over coffee</h1>
      <p>Pour-over brewing gives you full control over every variable that affects the taste of your coffee, from the grind size to the speed at which you pour the water over the grounds.</p>
      <h2 id="gear">What you need</h2>
      <ul>
        <li>A cone dripper and a matching paper filter</li>
        <li>Twenty grams of freshly roasted beans, ground medium fine</li>
        <li>A gooseneck kettle with water just off the boil</li>
      </ul>
      <h2 id="steps">Steps</h2>
      <ol>
        <li>Rinse the paper filter with hot water to remove the papery taste and warm the dripper.</li>
        <li>Add the ground coffee and pour about forty grams of water to let it bloom for thirty seconds.</li>
        <li>Pour the remaining water in slow circles until you reach three hundred and twenty grams in total.</li>
      </ol>
      <p>The whole brew should take between three and four minutes. If it runs faster, grind finer next time; if it runs slower, grind coarser, and keep notes so that you can repeat a cup you enjoyed.</p>
      <pre><code>ratio = water_grams / coffee_grams  # aim for about 16</code></pre>
    </div>
  </div>
  <div class="related-posts"><h3>You might also like</h3><a href="/cold-brew">Cold brew at home</a></div>
  <footer><p>Brew School newsletter: get a new recipe every Friday.</p></footer>
</body>
</html>`;

const productHtml = `<!doctype html>
<html>
<head><title>Trailblazer 40L Hiking Backpack – Summit Outfitters</title>
<meta property="og:title" content="Trailblazer 40L Hiking Backpack"></head>
<body>
  <header><a href="/">Summit Outfitters</a><nav><a href="/men">Men</a><a href="/women">Women</a><a href="/cart">Cart (0)</a></nav></header>
  <div class="breadcrumbs"><a href="/">Home</a> / <a href="/packs">Packs</a> / Trailblazer 40L</div>
  <div class="product">
    <h1>Trailblazer 40L Hiking Backpack</h1>
    <div class="price">£89.00</div>
    <button class="add-to-cart">Add to basket</button>
    <div class="product-description">
      <p>The Trailblazer is a forty litre pack designed for long day hikes and lightweight overnight trips. Its ventilated back panel keeps air moving between you and the load, so you stay cooler on steep climbs in summer.</p>
      <p>The main compartment opens from the top and from the front, which makes it easy to reach a jacket or a stove without unpacking everything else. Two stretch side pockets hold water bottles within reach while walking.</p>
      <p>The fabric is a recycled ripstop nylon with a water repellent finish, and an integrated rain cover is stored in the base for heavier showers. The hip belt carries two zipped pockets large enough for a phone and snacks.</p>
    </div>
    <table class="specs"><tr><th>Weight</th><td>1.2 kg</td></tr><tr><th>Volume</th><td>40 litres</td></tr></table>
  </div>
  <div class="related-products"><h3>Customers also bought</h3><a href="/p/1">Trekking poles</a><a href="/p/2">Water bottle</a></div>
  <footer><p>Free delivery on orders over £50. Returns within 30 days.</p></footer>
</body>
</html>`;

const TOPICS = ["soil", "rainfall", "pruning", "compost", "seedlings", "greenhouse", "mulch", "orchards"];

/** A plain article page about `topic`, long enough to pass the default minimum. */
function articlePage(topic: string, opts: { canonical?: string; paragraphs?: number; lead?: string } = {}): string {
  const paragraphs = Array.from(
    { length: opts.paragraphs ?? 6 },
    (_, i) =>
      `<p>${opts.lead ?? ""}Paragraph ${i + 1} about ${topic}: gardeners who pay attention to ${topic} early in the season ` +
      `find that their plants establish faster, need less water in midsummer, and suffer fewer problems with pests ` +
      `and disease, which is why experienced growers keep simple notes about ${topic} every single week.</p>`,
  ).join("\n");
  const canonical = opts.canonical ? `<link rel="canonical" href="${opts.canonical}">` : "";
  return `<!doctype html><html><head><title>A guide to ${topic}</title>${canonical}</head><body>
    <nav><a href="/">Home</a> <a href="/guides">Guides</a></nav>
    <article><h1>A guide to ${topic}</h1>${paragraphs}</article>
    <footer>Garden Weekly footer text</footer></body></html>`;
}

const shortPage = `<!doctype html><html><head><title>Coming soon</title></head><body>
  <article><p>This page is coming soon. Check back next week for the full guide to planting bulbs.</p></article>
  </body></html>`;

// ---------------------------------------------------------------------------------------------
// A local "internet": one server answers for every hostname, routing on the Host header
// ---------------------------------------------------------------------------------------------

type Route = string | { status?: number; type?: string; body?: string; location?: string };
const routes = new Map<string, Route>();
let web: ReturnType<typeof Bun.serve>;
let closedPort = 0;

function on(host: string, path: string, route: Route): string {
  routes.set(`${host}${path}`, route);
  return pageUrl(host, path);
}

function pageUrl(host: string, path: string): string {
  return `http://${host}:${web.port}${path}`;
}

/** The production fetcher, with every hostname resolving to the local server. */
const fetchPage: FetchPage = createPageFetcher({
  allowPrivate: true,
  timeoutMs: 3000,
  resolveHost: async () => [{ address: "127.0.0.1", family: 4 }],
});

function fakeProvider(urls: string[], questions: string[] = []): SearchProvider & { counts: number[] } {
  const counts: number[] = [];
  return {
    name: "fake",
    counts,
    async search(_query: string, opts: { count: number }): Promise<SearchOutcome> {
      counts.push(opts.count);
      return {
        results: urls.slice(0, opts.count).map((url, i) => ({ url, title: `Result ${i + 1}`, snippet: "" })),
        questions,
      };
    },
  };
}

beforeAll(() => {
  web = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
      const route = routes.get(`${host}${url.pathname}`);
      if (route === undefined) return new Response("<p>not found</p>", { status: 404, headers: { "content-type": "text/html" } });
      if (typeof route === "string") return new Response(route, { headers: { "content-type": "text/html; charset=utf-8" } });
      const headers: Record<string, string> = { "content-type": route.type ?? "text/html" };
      if (route.location) headers.location = route.location;
      return new Response(route.body ?? "", { status: route.status ?? 200, headers });
    },
  });
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  closedPort = closed.port!;
  closed.stop(true);
});

afterAll(() => {
  web.stop(true);
});

// ---------------------------------------------------------------------------------------------

describe("extractMainText", () => {
  test("a news article keeps its paragraphs and drops navigation, cookie banner, ads, sidebar and comments", () => {
    const page = extractMainText(newsArticleHtml, "https://news.example.com/story?id=7");
    expect(page.title).toBe("City council approves riverside solar farm");
    expect(page.canonicalUrl).toBe("https://news.example.com/2024/05/city-council-approves-riverside-solar-farm");

    const paragraphs = page.text.split("\n\n");
    expect(paragraphs[0]).toStartWith("The city council voted nine to two on Tuesday night");
    expect(paragraphs).toContain("Concerns about wildlife");
    expect(paragraphs.at(-1)).toStartWith("Construction is scheduled to begin in August");
    expect(page.text).toContain("leave a thirty metre buffer of meadow");

    for (const furniture of [
      "Accept all cookies",
      "cookies to personalise",
      "Politics",
      "SPONSORED",
      "Advertisement",
      "Share on Facebook",
      "Great article, thanks",
      "warehouse roofs",
      "Most read this week",
      "Subscribe to our newsletter",
      "All rights reserved",
    ]) {
      expect(page.text).not.toContain(furniture);
    }
    // Whitespace is normalised inside paragraphs and between them.
    expect(page.text).not.toMatch(/[ \t]{2,}|\n{3,}|^\s|\s$/);
  });

  test("a tutorial keeps headings, list steps and code, and drops the table of contents", () => {
    const page = extractMainText(tutorialHtml, "https://brew.example.com/guides/pour-over");
    expect(page.title).toStartWith("How to brew pour-over coffee");
    expect(page.canonicalUrl).toBeNull();
    const paragraphs = page.text.split("\n\n");
    expect(paragraphs).toContain("What you need");
    expect(paragraphs).toContain("- A cone dripper and a matching paper filter");
    expect(paragraphs).toContain("- Rinse the paper filter with hot water to remove the papery taste and warm the dripper.");
    expect(page.text).toContain("ratio = water_grams / coffee_grams");
    expect(page.text).not.toContain("On this page");
    expect(page.text).not.toContain("Log in");
    expect(page.text).not.toContain("You might also like");
    expect(page.text).not.toContain("new recipe every Friday");
  });

  test("a product page keeps the description and drops basket, breadcrumbs and cross-sells", () => {
    const page = extractMainText(productHtml, "https://shop.example.com/p/trailblazer-40");
    expect(page.title).toBe("Trailblazer 40L Hiking Backpack");
    expect(page.text).toContain("forty litre pack designed for long day hikes");
    expect(page.text).toContain("integrated rain cover is stored in the base");
    expect(page.text.split("\n\n")).toHaveLength(3);
    for (const furniture of ["Add to basket", "Customers also bought", "Cart (0)", "Home / Packs", "Free delivery"]) {
      expect(page.text).not.toContain(furniture);
    }
  });

  test("a page without readable content yields empty text, not an error", () => {
    const page = extractMainText("<html><head><title>Empty</title></head><body></body></html>", "https://x.example.com/");
    expect(page.text).toBe("");
    expect(page.title).toBe("Empty");
  });
});

describe("word limits", () => {
  test("truncateWords keeps the first words and the paragraph breaks", () => {
    expect(truncateWords("one two\n\nthree four five", 3)).toBe("one two\n\nthree");
    expect(truncateWords("one two", 5)).toBe("one two");
    expect(truncateWords("one two", 0)).toBe("");
  });
});

describe("domains", () => {
  test("the default exclusions are four low-value domains", () => {
    expect([...DEFAULT_EXCLUDED_DOMAINS].sort()).toEqual(["facebook.com", "pinterest.com", "quora.com", "reddit.com"]);
  });

  test.each(["example.com", "blog.example.co.uk", "xn--bcher-kva.example", "a-b.example.org"])("%s is a valid domain", (d) => {
    expect(isValidDomain(d)).toBe(true);
  });

  test.each([
    "localhost",
    "https://example.com",
    "example.com/path",
    "example.com:8080",
    "-bad.example.com",
    "bad-.example.com",
    "exa mple.com",
    "192.168.1.1",
    `${"a".repeat(64)}.com`,
    `${"abcdefghi.".repeat(26)}com`,
    "",
  ])("%p is not a valid domain", (d) => {
    expect(isValidDomain(d)).toBe(false);
  });

  test("exclusions cover subdomains but not look-alike names", () => {
    const filter = { exclude: ["example.com"] };
    expect(domainAllowed("https://example.com/a", filter)).toBe(false);
    expect(domainAllowed("https://blog.example.com/a", filter)).toBe(false);
    expect(domainAllowed("https://notexample.com/a", filter)).toBe(true);
    expect(domainAllowed("https://example.com.evil.net/a", filter)).toBe(true);
  });

  test("a non-empty include list wins and the exclude list is ignored", () => {
    const filter = { include: ["example.com", "reddit.com"], exclude: ["reddit.com", "example.com"] };
    expect(domainAllowed("https://blog.example.com/a", filter)).toBe(true);
    expect(domainAllowed("https://www.reddit.com/r/x", filter)).toBe(true);
    expect(domainAllowed("https://notexample.com/a", filter)).toBe(false);
    expect(domainAllowed("https://other.org/a", filter)).toBe(false);
  });
});

describe("gatherResearch", () => {
  test("realistic pages become numbered sources in search rank order; short and excluded pages are discarded", async () => {
    const news = on("news.example.com", "/story", newsArticleHtml);
    const tutorial = on("brew.example.com", "/guides/pour-over", tutorialHtml);
    const product = on("shop.example.com", "/p/trailblazer", productHtml);
    const short = on("bulbs.example.com", "/soon", shortPage);
    const pin = on("www.pinterest.com", "/pin/123", articlePage("pins"));
    const reddit = on("old.reddit.com", "/r/gardening/1", articlePage("threads"));
    const provider = fakeProvider([pin, news, short, tutorial, reddit, product], ["Is solar farmland good for wildlife?"]);
    const fixedNow = new Date("2024-05-01T12:00:00Z");

    const research = await gatherResearch(
      { query: "riverside solar farm" },
      { provider, fetchPage, now: () => fixedNow },
    );

    expect(research.sources.map((s) => s.url)).toEqual([news, tutorial, product]);
    expect(research.sources.map((s) => s.index)).toEqual([1, 2, 3]);
    expect(research.sources[0]!.title).toBe("City council approves riverside solar farm");
    expect(research.sources[0]!.text).toStartWith("The city council voted nine to two");
    expect(research.sources[0]!.wordCount).toBe(countWords(research.sources[0]!.text));
    expect(research.sources[0]!.fetchedAt).toBe("2024-05-01T12:00:00.000Z");
    expect(research.questions).toEqual(["Is solar farmland good for wildlife?"]);

    const reasons = Object.fromEntries(research.discarded.map((d) => [d.url, d.reason]));
    expect(reasons[pin]).toBe("excluded domain");
    expect(reasons[reddit]).toBe("excluded domain");
    expect(reasons[short]).toMatch(/^too short: \d+ words \(minimum 100\)$/);
    // The engine is asked for spare results so discards leave room.
    expect(provider.counts[0]).toBeGreaterThanOrEqual(15);
    expect(provider.counts[0]).toBeLessThanOrEqual(30);
  });

  test("pages under the minimum are discarded and long pages are truncated to the maximum", async () => {
    const long = on("long.example.com", "/a", articlePage("soil", { paragraphs: 20 }));
    const brief = on("brief.example.com", "/a", articlePage("rainfall", { paragraphs: 2 }));
    const research = await gatherResearch(
      { query: "soil", minContentWords: 100, maxWordsPerSource: 150 },
      { provider: fakeProvider([long, brief]), fetchPage },
    );
    expect(research.sources).toHaveLength(1);
    const [source] = research.sources as [ResearchSource];
    expect(source.url).toBe(long);
    expect(source.wordCount).toBe(150);
    expect(countWords(source.text)).toBe(150);
    expect(source.text).toContain("\n\n");
    expect(research.discarded).toEqual([{ url: brief, reason: expect.stringMatching(/^too short: \d+ words \(minimum 100\)$/) }]);
  });

  test("include-domains keeps subdomains, refuses look-alikes, and overrides the default exclusions", async () => {
    const blog = on("blog.example.com", "/post", articlePage("pruning"));
    const lookalike = on("notexample.com", "/post", articlePage("compost"));
    const reddit = on("www.reddit.com", "/r/gardening", articlePage("seedlings"));
    const research = await gatherResearch(
      { query: "pruning", includeDomains: ["example.com", "reddit.com"], excludeDomains: ["example.com"] },
      { provider: fakeProvider([blog, lookalike, reddit]), fetchPage },
    );
    expect(research.sources.map((s) => s.url)).toEqual([blog, reddit]);
    expect(research.discarded).toEqual([{ url: lookalike, reason: "not in the include-domains list" }]);
  });

  test("a custom exclude list replaces the default one and covers subdomains", async () => {
    const excluded = on("www.example.org", "/a", articlePage("greenhouse"));
    const forum = on("www.quora.com", "/q", articlePage("mulch"));
    const research = await gatherResearch(
      { query: "greenhouse", excludeDomains: ["example.org"] },
      { provider: fakeProvider([excluded, forum]), fetchPage },
    );
    expect(research.sources.map((s) => s.url)).toEqual([forum]);
    expect(research.discarded).toEqual([{ url: excluded, reason: "excluded domain" }]);
  });

  test("an explicit empty exclude list excludes nothing, not even the default domains", async () => {
    const forum = on("www.reddit.com", "/r/gardening/2", articlePage("raised beds"));
    const pins = on("www.pinterest.com", "/pin/9", articlePage("trellis"));
    const research = await gatherResearch(
      { query: "raised beds", excludeDomains: [] },
      { provider: fakeProvider([forum, pins]), fetchPage },
    );
    expect(research.sources.map((s) => s.url)).toEqual([forum, pins]);
    expect(research.discarded).toEqual([]);
  });

  test("at most maxSources are kept, the top-ranked ones, and later pages are not fetched", async () => {
    const urls = TOPICS.map((topic) => on(`${topic}.example.net`, "/guide", articlePage(topic)));
    const fetched: string[] = [];
    const research = await gatherResearch(
      { query: "garden", maxSources: 3 },
      { provider: fakeProvider(urls), fetchPage: (url) => (fetched.push(url), fetchPage(url)), concurrency: 1 },
    );
    expect(research.sources.map((s) => s.url)).toEqual(urls.slice(0, 3));
    expect(fetched).toEqual(urls.slice(0, 3));
  });

  test("fetches run concurrently but never beyond the bound", async () => {
    const urls = TOPICS.map((topic) => on(`${topic}.example.io`, "/guide", articlePage(topic)));
    let inFlight = 0;
    let peak = 0;
    const slowFetch: FetchPage = async (url) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await Bun.sleep(20);
      try {
        return await fetchPage(url);
      } finally {
        inFlight--;
      }
    };
    const research = await gatherResearch({ query: "garden", maxSources: 8 }, { provider: fakeProvider(urls), fetchPage: slowFetch, concurrency: 3 });
    expect(research.sources).toHaveLength(8);
    expect(peak).toBe(3);
  });

  test("the same page under two URLs (same canonical) or copied elsewhere (same text) counts once", async () => {
    const canonical = pageUrl("news.example.co", "/story");
    const original = on("news.example.co", "/story", articlePage("orchards", { canonical }));
    // The AMP edition words things slightly differently but declares the same canonical page.
    const amp = on("news.example.co", "/amp/story", articlePage("orchards", { canonical, lead: "AMP edition. " }));
    const tracked = `${original}?utm_source=newsletter`;
    const copy = on("mirror.example.net", "/copied-story", articlePage("orchards"));
    const other = on("other.example.net", "/story", articlePage("seedlings"));
    const research = await gatherResearch(
      { query: "orchards" },
      { provider: fakeProvider([original, amp, copy, tracked, other]), fetchPage },
    );
    expect(research.sources.map((s) => s.url)).toEqual([original, other]);
    const reasons = Object.fromEntries(research.discarded.map((d) => [d.url, d.reason]));
    expect(reasons[amp]).toBe(`duplicate of ${original} (same canonical URL)`);
    expect(reasons[copy]).toBe(`duplicate of ${original} (same text)`);
    expect(reasons[tracked]).toBe("listed twice by the search engine");
  });

  test("failed fetches are discarded with a reason and the rest of the research goes on", async () => {
    const missing = pageUrl("gone.example.com", "/404");
    const json = on("api.example.com", "/data", { type: "application/json", body: '{"a":1}' });
    const refused = `http://127.0.0.1:${closedPort}/`;
    const toExcluded = on("go.example.com", "/out", { status: 302, location: pageUrl("www.pinterest.com", "/pin/9") });
    on("www.pinterest.com", "/pin/9", articlePage("pins"));
    const good = on("good.example.com", "/guide", articlePage("compost"));
    const research = await gatherResearch(
      { query: "compost" },
      { provider: fakeProvider([missing, json, refused, toExcluded, good]), fetchPage },
    );
    expect(research.sources.map((s) => s.url)).toEqual([good]);
    const reasons = Object.fromEntries(research.discarded.map((d) => [d.url, d.reason]));
    expect(reasons[missing]).toBe("fetch failed: HTTP 404");
    expect(reasons[json]).toStartWith("fetch failed: content-type:");
    expect(reasons[refused]).toStartWith("fetch failed: connection:");
    expect(reasons[toExcluded]).toBe(`redirected to ${pageUrl("www.pinterest.com", "/pin/9")}: excluded domain`);
  });

  test("without allowPrivate the page fetcher refuses internal addresses", async () => {
    const guarded = createPageFetcher({ allowPrivate: false, timeoutMs: 2000 });
    const internal = `http://localhost:${web.port}/anything`;
    const research = await gatherResearch({ query: "x" }, { provider: fakeProvider([internal]), fetchPage: guarded });
    expect(research.sources).toEqual([]);
    const reason = research.discarded[0]!.reason;
    expect(reason).toStartWith("fetch failed: refused-address: localhost resolves to a private address");
    expect(reason).not.toContain("127.0.0.1");
  });

  test("a search that yields nothing usable returns zero sources", async () => {
    const short = on("tiny.example.com", "/a", shortPage);
    const empty = await gatherResearch({ query: "nothing" }, { provider: fakeProvider([]), fetchPage });
    expect(empty).toEqual({ sources: [], questions: [], discarded: [] });
    expect(renderResearch(empty.sources)).toBe("");

    const unusable = await gatherResearch(
      { query: "nothing" },
      { provider: fakeProvider([short, "https://www.facebook.com/somepage", "ftp://files.example.com/a"]), fetchPage },
    );
    expect(unusable.sources).toEqual([]);
    expect(unusable.discarded.map((d) => d.reason)).toEqual([
      "excluded domain",
      "not an http(s) URL",
      expect.stringMatching(/^too short/),
    ]);
  });

  test("an empty query is refused before searching", async () => {
    const provider = fakeProvider([]);
    await expect(gatherResearch({ query: "  " }, { provider, fetchPage })).rejects.toThrow("search query");
    expect(provider.counts).toEqual([]);
  });
});

describe("renderResearch", () => {
  test("numbers each source with its title and URL, followed by its text, separated by blank lines", () => {
    const sources: Omit<ResearchSource, "siteName">[] = [
      { index: 1, title: "Solar farm approved", url: "https://news.example.com/a", text: "First para.\n\nSecond para.", wordCount: 4, fetchedAt: "2024-05-01T00:00:00.000Z" },
      { index: 2, title: "Pour-over guide", url: "https://brew.example.com/b", text: "Grind medium fine.", wordCount: 3, fetchedAt: "2024-05-01T00:00:00.000Z" },
    ];
    expect(renderResearch(sources)).toBe(
      "[1] Solar farm approved — https://news.example.com/a\nFirst para.\n\nSecond para.\n\n" +
        "[2] Pour-over guide — https://brew.example.com/b\nGrind medium fine.",
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Search clients against local fakes
// ---------------------------------------------------------------------------------------------

describe("SearXNG client", () => {
  let searx: ReturnType<typeof Bun.serve>;
  const seen: URL[] = [];
  beforeAll(() => {
    searx = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        seen.push(url);
        const q = url.searchParams.get("q");
        if (q === "forbidden") return new Response("Forbidden", { status: 403 });
        if (q === "garbage") return new Response("<html>not json</html>", { headers: { "content-type": "text/html" } });
        if (q === "slow") return new Promise<Response>(() => {});
        return Response.json({
          query: q,
          number_of_results: 3,
          results: [
            { url: "https://a.example.com/1", title: "First", content: "Snippet one", engine: "duckduckgo" },
            { title: "No URL here", content: "skipped" },
            { url: "https://b.example.com/2", title: "Second", content: "Snippet two" },
            { url: "https://c.example.com/3", title: "Third" },
          ],
          answers: [{ answer: "How deep should tulip bulbs be planted?", url: "https://x.example.com" }, "42"],
          suggestions: ["when to plant tulip bulbs?", "tulip bulbs", "When to plant tulip bulbs?"],
          infoboxes: [],
          unresponsive_engines: [],
        });
      },
    });
  });
  afterAll(() => searx.stop(true));

  test("queries /search as JSON in the general category and maps results and questions", async () => {
    const provider = searxngProvider({ baseUrl: `http://127.0.0.1:${searx.port}/searx` });
    const outcome = await provider.search("tulip bulbs", { count: 2 });
    const request = seen.at(-1)!;
    expect(request.pathname).toBe("/searx/search");
    expect(request.searchParams.get("q")).toBe("tulip bulbs");
    expect(request.searchParams.get("format")).toBe("json");
    expect(request.searchParams.get("categories")).toBe("general");
    expect(outcome.results).toEqual([
      { url: "https://a.example.com/1", title: "First", snippet: "Snippet one" },
      { url: "https://b.example.com/2", title: "Second", snippet: "Snippet two" },
    ]);
    expect(outcome.questions).toEqual(["when to plant tulip bulbs?", "How deep should tulip bulbs be planted?"]);
  });

  test("HTTP errors, non-JSON answers and timeouts are clear errors", async () => {
    const provider = searxngProvider({ baseUrl: `http://127.0.0.1:${searx.port}`, timeoutMs: 200 });
    const forbidden = provider.search("forbidden", { count: 5 });
    await expect(forbidden).rejects.toBeInstanceOf(SearchProviderError);
    await expect(provider.search("forbidden", { count: 5 })).rejects.toThrow(/HTTP 403.*json format/);
    await expect(provider.search("garbage", { count: 5 })).rejects.toThrow("other than JSON");
    await expect(provider.search("slow", { count: 5 })).rejects.toThrow("no answer within 200 ms");
    const down = searxngProvider({ baseUrl: `http://127.0.0.1:${closedPort}` });
    await expect(down.search("x", { count: 5 })).rejects.toThrow("searxng: unreachable");
  });
});

describe("Brave client", () => {
  let brave: ReturnType<typeof Bun.serve>;
  const seen: { url: URL; token: string | null; accept: string | null }[] = [];
  beforeAll(() => {
    brave = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const url = new URL(req.url);
        const token = req.headers.get("x-subscription-token");
        seen.push({ url, token, accept: req.headers.get("accept") });
        if (url.pathname !== "/res/v1/web/search") return new Response("no route", { status: 404 });
        if (token === "bad-key") {
          return Response.json({ type: "ErrorResponse", error: { code: "SUBSCRIPTION_TOKEN_INVALID", detail: "The provided subscription token is invalid." } }, { status: 401 });
        }
        if (token === "busy-key") return Response.json({ type: "ErrorResponse", error: { code: "RATE_LIMITED" } }, { status: 429 });
        if (token === "down-key") return new Response("upstream failure", { status: 503 });
        return Response.json({
          type: "search",
          query: { original: url.searchParams.get("q") },
          web: {
            type: "search",
            results: [
              { type: "search_result", url: "https://a.example.com/1", title: "Growing <strong>tulips</strong>", description: "How to plant <strong>tulip</strong> bulbs &amp; care for them." },
              { type: "search_result", url: "https://b.example.com/2", title: "Bulb calendar", description: "Month by month." },
            ],
          },
          faq: {
            type: "faq",
            results: [
              { question: "When should you plant tulip bulbs?", answer: "In autumn.", title: "Tulips", url: "https://a.example.com/1" },
              { question: "Do tulips come back every year?", answer: "Often.", title: "Tulips", url: "https://b.example.com/2" },
            ],
          },
          discussions: {
            type: "search",
            results: [{ type: "discussion", title: "Tulip help", url: "https://forum.example.com/t/1", data: { forum_name: "Garden forum", question: "Why did my tulips not flower?" } }],
          },
        });
      },
    });
  });
  afterAll(() => brave.stop(true));

  const base = () => `http://127.0.0.1:${brave.port}`;

  test("sends the subscription token and count, and maps results, FAQ and discussion questions", async () => {
    const provider = braveProvider({ apiKey: "good-key", baseUrl: base() });
    const outcome = await provider.search("tulip bulbs", { count: 15 });
    const request = seen.at(-1)!;
    expect(request.token).toBe("good-key");
    expect(request.accept).toBe("application/json");
    expect(request.url.searchParams.get("q")).toBe("tulip bulbs");
    expect(request.url.searchParams.get("count")).toBe("15");
    expect(outcome.results).toEqual([
      { url: "https://a.example.com/1", title: "Growing tulips", snippet: "How to plant tulip bulbs & care for them." },
      { url: "https://b.example.com/2", title: "Bulb calendar", snippet: "Month by month." },
    ]);
    expect(outcome.questions).toEqual([
      "When should you plant tulip bulbs?",
      "Do tulips come back every year?",
      "Why did my tulips not flower?",
    ]);
  });

  test("asks for no more than Brave's maximum of 20 results", async () => {
    await braveProvider({ apiKey: "good-key", baseUrl: base() }).search("q", { count: 30 });
    expect(seen.at(-1)!.url.searchParams.get("count")).toBe("20");
  });

  test("401, 429 and 5xx are clear errors carrying the status", async () => {
    const cases: [string, number, RegExp][] = [
      ["bad-key", 401, /HTTP 401: the API key was rejected.*subscription token is invalid/],
      ["busy-key", 429, /HTTP 429: rate limit or monthly quota exceeded/],
      ["down-key", 503, /HTTP 503: Brave Search is unavailable/],
    ];
    for (const [apiKey, status, message] of cases) {
      const error = await braveProvider({ apiKey, baseUrl: base() })
        .search("q", { count: 5 })
        .then(() => undefined, (err: unknown) => err);
      expect(error).toBeInstanceOf(SearchProviderError);
      expect((error as SearchProviderError).status).toBe(status);
      expect((error as Error).message).toMatch(message);
    }
  });
});

describe("searchProviderFromEnv", () => {
  test("unconfigured means no provider", () => {
    expect(searchProviderFromEnv({})).toBeUndefined();
  });

  test("searxng and brave are built from their settings", () => {
    expect(searchProviderFromEnv({ SEARCH_PROVIDER: "searxng", SEARXNG_URL: "http://searx.internal:8080" })?.name).toBe("searxng");
    expect(searchProviderFromEnv({ SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "k" })?.name).toBe("brave");
  });

  test("a half-configured or unknown provider is one clear error naming the variable", () => {
    expect(() => searchProviderFromEnv({ SEARCH_PROVIDER: "searxng" })).toThrow("SEARXNG_URL is required");
    expect(() => searchProviderFromEnv({ SEARCH_PROVIDER: "searxng", SEARXNG_URL: "ftp://x" })).toThrow("SEARXNG_URL must be");
    expect(() => searchProviderFromEnv({ SEARCH_PROVIDER: "brave" })).toThrow("BRAVE_API_KEY is required");
    expect(() => searchProviderFromEnv({ SEARCH_PROVIDER: "google" })).toThrow("SEARCH_PROVIDER must be");
  });
});
