// The simulator playing a rate-limited, flaky provider: OpenAI's 429s and x-ratelimit headers,
// injected outages and slow periods, and the /_sim/provider endpoints that set them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError } from "openai";
import { openAIDuration, ProviderSettingsError, type ProviderState } from "../../services/model-simulator/src/provider-limits.ts";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";

let sim: RunningSimulator;
let openai: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, batchDelayMs: 300, provider: { requestsPerMinute: 600, tokensPerMinute: 90_000 } });
  openai = new OpenAI({ baseURL: sim.url + "/v1", apiKey: "x", maxRetries: 0 });
});

afterAll(async () => {
  await sim.stop();
});

const NO_LIMITS = { requests_per_minute: null, tokens_per_minute: null, burst_seconds: 1, headers: true, outage: null, slow: null };
const RATE_LIMIT_HEADERS = ["limit", "remaining", "reset"].flatMap((what) => [`x-ratelimit-${what}-requests`, `x-ratelimit-${what}-tokens`]);

async function putProvider(body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${sim.url}/_sim/provider`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

async function providerState(): Promise<ProviderState> {
  return (await fetch(`${sim.url}/_sim/provider`)).json() as Promise<ProviderState>;
}

/** Only the settings given on top of no limits at all, with full buckets and the counts at zero. */
async function provider(settings: Record<string, unknown> = {}): Promise<ProviderState> {
  const put = await putProvider({ ...NO_LIMITS, ...settings });
  expect(put.status).toBe(200);
  return (await fetch(`${sim.url}/_sim/provider/counts`, { method: "DELETE" })).json() as Promise<ProviderState>;
}

const ask = (content = "Say hello.", extra: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {}) =>
  openai.chat.completions.create({ model: "sim-fast", messages: [{ role: "user", content }], ...extra });

/** A chat call through plain fetch, to read its status, headers and raw body. */
async function post(path: string, body: unknown = { model: "sim-fast", messages: [{ role: "user", content: "Say hello." }] }) {
  const response = await fetch(`${sim.url}/v1/${path}`, {
    method: "POST",
    headers: { authorization: "Bearer x", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as any };
}

async function rateLimitError(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.RateLimitError>> {
  const error = await call.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  return error as InstanceType<typeof OpenAI.RateLimitError>;
}

const rateLimitMessage = (per: string, limit: number, requested: number) =>
  new RegExp(
    `^Rate limit reached for sim-fast in organization org-simulator on ${per}: Limit ${limit}, Used \\d+, Requested ${requested}\\. ` +
      `Please try again in (\\d+ms|\\d+(\\.\\d+)?s)\\. Visit https://platform\\.openai\\.com/account/rate-limits to learn more\\.$`,
  );

describe("starting settings", () => {
  test("startSimulator's provider settings show in GET /_sim/provider", async () => {
    expect(await providerState()).toEqual({
      limits: { requests_per_minute: 600, tokens_per_minute: 90_000, burst_seconds: 1, headers: true },
      outage: null,
      slow: null,
      counts: { admitted: 0, rate_limited: 0, failed: 0, first_admitted_at: null, last_admitted_at: null, peak_per_second: 0, peak_per_minute: 0 },
    });
  });

  test("startSimulator refuses bad provider settings", async () => {
    await expect(startSimulator({ port: 0, provider: { requestsPerMinute: 0 } })).rejects.toThrow(ProviderSettingsError);
  });

  test("main.ts reads SIMULATOR_*_PER_MINUTE and exits 1 naming a bad one", async () => {
    const main = "services/model-simulator/src/main.ts";
    const bad = Bun.spawn([process.execPath, main], { env: { ...process.env, SIMULATOR_PORT: "0", SIMULATOR_REQUESTS_PER_MINUTE: "60/min" }, stdout: "pipe", stderr: "pipe" });
    expect(await bad.exited).toBe(1);
    expect((await new Response(bad.stderr).text()).trim()).toBe("SIMULATOR_REQUESTS_PER_MINUTE must be a positive whole number (got '60/min')");

    const good = Bun.spawn([process.execPath, main], { env: { ...process.env, SIMULATOR_PORT: "0", SIMULATOR_REQUESTS_PER_MINUTE: "", SIMULATOR_TOKENS_PER_MINUTE: "5000" }, stdout: "pipe", stderr: "pipe" });
    try {
      const reader = good.stdout.getReader();
      let printed = "";
      while (!printed.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        printed += new TextDecoder().decode(value);
      }
      const url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
      expect(url).toBeDefined();
      const state = (await (await fetch(`${url}/_sim/provider`)).json()) as ProviderState;
      expect(state.limits).toEqual({ requests_per_minute: null, tokens_per_minute: 5000, burst_seconds: 1, headers: true });
    } finally {
      good.kill();
      await good.exited;
    }
  });
});

describe("rate limits", () => {
  test("a call over the RPM gets OpenAI's 429: retry-after, retry-after-ms, type requests, code rate_limit_exceeded", async () => {
    await provider({ requests_per_minute: 60 });
    await ask();
    const error = await rateLimitError(ask());
    expect(error.status).toBe(429);
    expect(error.type).toBe("requests");
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.param).toBeNull();
    expect(error.headers.get("retry-after")).toBe("1");
    const waitMs = Number(error.headers.get("retry-after-ms"));
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(1000);
    const message = (error.error as { message: string }).message;
    expect(message).toMatch(rateLimitMessage("requests per min \\(RPM\\)", 60, 1));
    // Used is what the bucket lacks, as a share of the minute's limit: what remaining-requests does not have.
    const remaining = Number(error.headers.get("x-ratelimit-remaining-requests"));
    expect(message).toContain(`Used ${60 - remaining},`);
    expect(message).toContain(`Please try again in ${waitMs}ms.`);
    expect(error.headers.get("x-ratelimit-limit-requests")).toBe("60");
    expect(error.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+ms$/);
    expect(error.headers.get("x-ratelimit-limit-tokens")).toBeNull();

    const raw = await post("chat/completions");
    expect(raw.status).toBe(429);
    expect(raw.json).toEqual({ error: { message: expect.stringMatching(rateLimitMessage("requests per min \\(RPM\\)", 60, 1)), type: "requests", param: null, code: "rate_limit_exceeded" } });
    const { counts } = await providerState();
    expect(counts).toMatchObject({ admitted: 1, rate_limited: 2, failed: 0, peak_per_second: 1, peak_per_minute: 1 });
  });

  test("waiting retry-after-ms is enough for the retry to be admitted", async () => {
    await provider({ requests_per_minute: 600 });
    const burst = await Promise.all(Array.from({ length: 14 }, () => post("chat/completions")));
    const refused = burst.filter((call) => call.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(burst.filter((call) => call.status === 200).length).toBeLessThanOrEqual(11);
    await Bun.sleep(Math.max(...refused.map((call) => Number(call.headers.get("retry-after-ms")))));
    expect((await post("chat/completions")).status).toBe(200);
  });

  test("200s carry the x-ratelimit headers of the limits set, in OpenAI's units", async () => {
    await provider({ requests_per_minute: 600, tokens_per_minute: 60_000 });
    const { data, response } = await ask("Say hello to the rate limiter.").withResponse();
    const cost = data.usage!.prompt_tokens;
    // Buckets of 10 requests and 1,000 tokens: one call leaves 9/10 and (1000 - cost)/1000 of a minute's limit.
    expect(response.headers.get("x-ratelimit-limit-requests")).toBe("600");
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("540");
    expect(response.headers.get("x-ratelimit-reset-requests")).toBe("100ms");
    expect(response.headers.get("x-ratelimit-limit-tokens")).toBe("60000");
    expect(response.headers.get("x-ratelimit-remaining-tokens")).toBe(String(60_000 - 60 * cost));
    expect(response.headers.get("x-ratelimit-reset-tokens")).toBe(`${cost}ms`);

    const image = await post("images/generations", { model: "sim-image", prompt: "a lighthouse", size: "256x256" });
    expect(image.status).toBe(200);
    expect(image.headers.get("x-ratelimit-limit-requests")).toBe("600");
    expect(image.headers.get("x-ratelimit-remaining-tokens")).not.toBeNull();
  });

  test("no limits, no x-ratelimit headers", async () => {
    await provider();
    const { response } = await ask().withResponse();
    for (const name of RATE_LIMIT_HEADERS) expect(response.headers.get(name)).toBeNull();
  });

  test("an RPM of 120 admits about 2 calls a second, and the peaks show it", async () => {
    await provider({ requests_per_minute: 120 });
    const started = performance.now();
    let ok = 0;
    while (performance.now() - started < 2_100) {
      if ((await post("chat/completions")).status === 200) ok++;
      await Bun.sleep(20);
    }
    const seconds = (performance.now() - started) / 1000;
    const { counts } = await providerState();
    expect(counts.admitted).toBe(ok);
    // A bucket of 2 refilling at 2 a second: at most 2 + 2 per second elapsed, and about that many.
    expect(counts.admitted).toBeLessThanOrEqual(2 + 2 * seconds);
    expect(counts.admitted).toBeGreaterThanOrEqual(Math.floor(2 + 2 * seconds) - 1);
    expect(counts.rate_limited).toBeGreaterThan(counts.admitted);
    expect(counts.peak_per_second).toBeGreaterThanOrEqual(2);
    expect(counts.peak_per_second).toBeLessThanOrEqual(4);
    expect(counts.peak_per_minute).toBe(counts.admitted);
    expect(counts.last_admitted_at! - counts.first_admitted_at!).toBeGreaterThan(1_000);
  });

  test("a call over the TPM is refused on tokens, its cost being the prompt plus max_completion_tokens", async () => {
    await provider();
    const prompt = "Write one line about rate limits.";
    const promptTokens = (await ask(prompt)).usage!.prompt_tokens;
    // A bucket of 100 tokens: the first call takes promptTokens + 40, leaving too few for promptTokens + 90.
    await provider({ tokens_per_minute: 6_000 });
    await ask(prompt, { max_completion_tokens: 40 });
    const error = await rateLimitError(ask(prompt, { max_completion_tokens: 90, max_tokens: 5 }));
    expect(error.type).toBe("tokens");
    expect(error.code).toBe("rate_limit_exceeded");
    expect((error.error as { message: string }).message).toMatch(rateLimitMessage("tokens per min \\(TPM\\)", 6_000, promptTokens + 90));
    expect(Number(error.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    expect(error.headers.get("x-ratelimit-limit-tokens")).toBe("6000");
    expect(error.headers.get("x-ratelimit-limit-requests")).toBeNull();
  });

  test("a call costing more tokens than the bucket holds is admitted when it is full and leaves it in debt", async () => {
    await provider({ tokens_per_minute: 600 });
    const { response } = await ask("Say hello.", { max_tokens: 500 }).withResponse();
    expect(response.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
    expect(response.headers.get("x-ratelimit-reset-tokens")).toMatch(/^\d+(\.\d+)?s$/);
    const error = await rateLimitError(ask("Hi."));
    expect(error.type).toBe("tokens");
    expect(Number(error.headers.get("retry-after"))).toBeGreaterThan(40);
  });

  test("burst_seconds sizes the buckets, and setting a limit refills its bucket", async () => {
    await provider({ requests_per_minute: 60, burst_seconds: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post("chat/completions")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    await putProvider({ requests_per_minute: 60 });
    expect((await post("chat/completions")).status).toBe(200);
  });

  test("creating a batch is one request", async () => {
    await provider({ requests_per_minute: 60 });
    const first = await post("batches", {});
    expect(first.status).toBe(400);
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const second = await post("batches", {});
    expect(second.status).toBe(429);
    expect(second.json.error.message).toStartWith("Rate limit reached for batches in organization org-simulator on requests per min (RPM)");
    expect((await providerState()).counts).toMatchObject({ admitted: 1, rate_limited: 1 });
  });

  test("headers: false keeps the limits and retry-after but drops the x-ratelimit headers", async () => {
    await provider({ requests_per_minute: 60, tokens_per_minute: 100_000, headers: false });
    const { response } = await ask().withResponse();
    for (const name of RATE_LIMIT_HEADERS) expect(response.headers.get(name)).toBeNull();
    const error = await rateLimitError(ask());
    expect(error.headers.get("retry-after")).toBe("1");
    expect(Number(error.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    for (const name of RATE_LIMIT_HEADERS) expect(error.headers.get(name)).toBeNull();
    expect((await providerState()).limits.headers).toBe(false);
  });
});

describe("bad days", () => {
  test("an outage answers 503 with OpenAI's body, counts as failed, takes nothing, and ends by itself", async () => {
    await provider({ requests_per_minute: 60, outage: { duration_ms: 400 } });
    const error = await ask().then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as APIError).status).toBe(503);
    const raw = await post("chat/completions");
    expect(raw.status).toBe(503);
    expect(raw.json).toEqual({ error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: null } });
    expect((await post("images/generations", { prompt: "a lighthouse" })).status).toBe(503);

    const during = await providerState();
    expect(during.outage).toEqual({ status: 503, until: expect.any(Number) });
    expect(during.counts).toMatchObject({ admitted: 0, rate_limited: 0, failed: 3 });
    const deadline = Date.now() + 3_000;
    while ((await providerState()).outage !== null && Date.now() < deadline) await Bun.sleep(25);
    expect((await ask()).choices[0].message.content).toBeTruthy();
    expect((await providerState()).counts).toMatchObject({ admitted: 1, failed: 3 });
  });

  test("an outage can answer another 5xx and be ended early", async () => {
    await provider({ outage: { status: 500, duration_ms: 60_000 } });
    const raw = await post("chat/completions");
    expect(raw.status).toBe(500);
    expect(raw.json.error).toEqual({ message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null });
    expect((await putProvider({ outage: null })).json.outage).toBeNull();
    expect((await post("chat/completions")).status).toBe(200);
  });

  test("a slow period delays each call until it ends", async () => {
    const state = await provider({ slow: { delay_ms: 200, duration_ms: 5_000 } });
    expect(state.slow).toEqual({ delay_ms: 200, until: expect.any(Number) });
    const started = performance.now();
    const image = await post("images/generations", { prompt: "a slow lighthouse", size: "64x64" });
    expect(image.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await putProvider({ slow: null });
    expect((await providerState()).slow).toBeNull();
  });
});

describe("control endpoints", () => {
  test("bad settings answer 400 and change nothing", async () => {
    const before = await provider({ requests_per_minute: 100 });
    const bad: unknown[] = [
      { requests_per_minute: 0 },
      { requests_per_minute: -1 },
      { requests_per_minute: 1.5 },
      { requests_per_minute: "60" },
      { tokens_per_minute: 0 },
      { burst_seconds: 0 },
      { burst_seconds: "2" },
      { headers: "no" },
      { outage: { status: 404, duration_ms: 100 } },
      { outage: { duration_ms: 0 } },
      { outage: { status: 503 } },
      { outage: true },
      { slow: { delay_ms: -5, duration_ms: 100 } },
      { slow: { delay_ms: 100 } },
      { slow: { delay_ms: 100, duration_ms: 100, jitter_ms: 5 } },
      { request_per_minute: 60 },
      { requests_per_minute: 200, burst_seconds: -1 },
      [],
      "fast",
    ];
    for (const body of bad) {
      const put = await putProvider(body);
      expect(put.status, JSON.stringify(body)).toBe(400);
      expect(typeof put.json.error).toBe("string");
    }
    expect(await providerState()).toEqual(before);
  });

  test("PUT answers like GET, and DELETE /_sim/provider/counts zeroes the counts", async () => {
    await provider();
    const put = await putProvider({ requests_per_minute: 120, tokens_per_minute: 40_000, burst_seconds: 2.5, headers: false });
    expect(put.status).toBe(200);
    expect(put.json).toEqual(await providerState());
    expect(put.json.limits).toEqual({ requests_per_minute: 120, tokens_per_minute: 40_000, burst_seconds: 2.5, headers: false });
    await ask();
    const counted = await providerState();
    expect(counted.counts.admitted).toBe(1);
    expect(counted.counts.first_admitted_at).toBe(counted.counts.last_admitted_at);
    const reset = await (await fetch(`${sim.url}/_sim/provider/counts`, { method: "DELETE" })).json();
    expect(reset.counts).toEqual({ admitted: 0, rate_limited: 0, failed: 0, first_admitted_at: null, last_admitted_at: null, peak_per_second: 0, peak_per_minute: 0 });
    expect(reset.limits).toEqual(put.json.limits);
  });

  test("waits are written in OpenAI's duration format", () => {
    expect(openAIDuration(0)).toBe("0s");
    expect(openAIDuration(0.2)).toBe("1ms");
    expect(openAIDuration(120)).toBe("120ms");
    expect(openAIDuration(1_000)).toBe("1s");
    expect(openAIDuration(1_500)).toBe("1.5s");
    expect(openAIDuration(61_250)).toBe("1m1.25s");
    expect(openAIDuration(360_000)).toBe("6m0s");
    expect(openAIDuration(3_600_000)).toBe("1h0m0s");
  });
});
