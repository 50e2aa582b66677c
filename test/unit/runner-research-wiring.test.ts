// How the runner wires research from its environment: next to the bundled simulator (and no
// SEARCH_PROVIDER), it searches the simulator through the real SearXNG client and trusts that
// one origin for fetching, while every other private address stays refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { researchToolsFromEnv } from "../../services/generation-runner/src/research/article-research.ts";
import { gatherResearch } from "../../services/generation-runner/src/research/research.ts";

let sim: RunningSimulator;
let other: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<html><body><p>internal</p></body></html>", { headers: { "content-type": "text/html" } }) });
});

afterAll(async () => {
  await sim.stop();
  other.stop(true);
});

describe("research wiring", () => {
  test("no search provider and no simulator: research is unavailable", () => {
    expect(researchToolsFromEnv({}, false)).toBeUndefined();
  });

  test("next to the simulator: SearXNG against it, its origin trusted, nothing else private", async () => {
    const tools = researchToolsFromEnv({ SIMULATOR_URL: sim.url }, false)!;
    expect(tools.provider.name).toBe("searxng");
    const found = await gatherResearch({ query: "pour over kettles", maxSources: 3 }, tools);
    expect(found.sources.length).toBe(3);
    expect(found.sources.every((s) => s.url.startsWith(`${sim.url}/pages/`))).toBe(true);
    expect(found.questions.length).toBeGreaterThan(0);
    await expect(tools.fetchPage(`http://127.0.0.1:${other.port}/page`)).rejects.toThrow("refused-address");
  });

  test("ALLOW_PRIVATE_URLS opens private addresses for local development", async () => {
    const tools = researchToolsFromEnv({ SIMULATOR_URL: sim.url }, true)!;
    const page = await tools.fetchPage(`http://127.0.0.1:${other.port}/page`);
    expect(page.html).toContain("internal");
  });

  test("an explicit SEARCH_PROVIDER wins over the simulator and trusts no origin", async () => {
    const tools = researchToolsFromEnv({ SIMULATOR_URL: sim.url, SEARCH_PROVIDER: "searxng", SEARXNG_URL: sim.url }, false)!;
    await expect(tools.fetchPage(`${sim.url}/pages/anything`)).rejects.toThrow("refused-address");
    expect(() => researchToolsFromEnv({ SEARCH_PROVIDER: "brave" }, false)).toThrow("BRAVE_API_KEY");
  });
});
