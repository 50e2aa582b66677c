// The bundled model simulator, driven through the official openai SDK the runner uses, plus the
// SearXNG-style search and pages the research step reads.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import OpenAI, { APIError, toFile } from "openai";
import { inflateSync } from "node:zlib";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { CallCounter } from "../../services/model-simulator/src/call-counter.ts";

let sim: RunningSimulator;
let openai: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, batchDelayMs: 300 });
  openai = new OpenAI({ apiKey: "test", baseURL: sim.url + "/v1", maxRetries: 0 });
});

afterAll(async () => {
  await sim.stop();
});

/** Words as a reader counts them: tokens with a letter or digit (markdown marks excluded). */
const wordCount = (text: string): number => text.split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t)).length;
const marker = (): string => `marker-${crypto.randomUUID()}`;

async function ask(content: string, extra: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {}) {
  return openai.chat.completions.create({ model: "sim-fast", messages: [{ role: "user", content }], ...extra });
}

async function statusOf(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
    return 200;
  } catch (error) {
    expect(error).toBeInstanceOf(APIError);
    return (error as APIError).status;
  }
}

describe("chat completions", () => {
  test("writes a markdown article about the prompt, with usage, deterministically", async () => {
    const prompt = "Write an article about sourdough bread baking at home.\nTitle: Sourdough Bread at Home";
    const first = await ask(prompt);
    const content = first.choices[0].message.content ?? "";
    expect(first.object).toBe("chat.completion");
    expect(first.model).toBe("sim-fast");
    expect(first.system_fingerprint).toBe("simulator");
    expect(first.choices[0].finish_reason).toBe("stop");
    expect(first.choices[0].message.role).toBe("assistant");
    expect(content.startsWith("# Sourdough Bread at Home\n")).toBe(true);
    expect(content.match(/^## /gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(content.toLowerCase()).toContain("sourdough bread");
    expect(Math.abs(wordCount(content) - 400)).toBeLessThanOrEqual(40);

    const usage = first.usage!;
    expect(usage.completion_tokens).toBe(Math.round(content.split(/\s+/).filter(Boolean).length * 1.3));
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);

    const again = await ask(prompt);
    expect(again.choices[0].message.content).toBe(content);
  });

  test("takes the title from the first sentence and the length from the prompt", async () => {
    const reply = await ask("Write a 1500 words guide on home espresso machines. Keep it friendly.");
    const content = reply.choices[0].message.content ?? "";
    expect(content.split("\n")[0]).toBe("# Home Espresso Machines");
    expect(Math.abs(wordCount(content) - 1500)).toBeLessThanOrEqual(150);
  });

  test("[[sim:echo]] returns the message exactly, minus the directive", async () => {
    const text = `  Line one [[sim:echo]]\n\tline two with  spaces ${marker()}  \n`;
    const reply = await ask(text);
    expect(reply.choices[0].message.content).toBe(text.replace("[[sim:echo]]", ""));

    const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false };
    const structured = await ask(`[[sim:echo]]not json at all`, {
      response_format: { type: "json_schema", json_schema: { name: "t", schema, strict: true } },
    });
    expect(structured.choices[0].message.content).toBe("not json at all");
  });

  test("[[sim:words=N]] writes about N words", async () => {
    for (const words of [60, 250, 900]) {
      const reply = await ask(`Write about garden composting [[sim:words=${words}]] for 3000 words`);
      const count = wordCount(reply.choices[0].message.content ?? "");
      expect(Math.abs(count - words)).toBeLessThanOrEqual(words * 0.15);
    }
  });

  test("json_schema replies conform to the schema, nested objects and arrays included", async () => {
    const schema = Type.Object(
      {
        title: Type.String(),
        meta_description: Type.String(),
        content: Type.String(),
        reading_minutes: Type.Integer({ minimum: 1, maximum: 30 }),
        score: Type.Number({ minimum: 0, maximum: 1 }),
        featured: Type.Boolean(),
        tone: Type.Union([Type.Literal("formal"), Type.Literal("casual")]),
        subtitle: Type.Union([Type.String(), Type.Null()]),
        author: Type.Object({ name: Type.String(), email: Type.String() }, { additionalProperties: false }),
        sections: Type.Array(
          Type.Object(
            {
              heading: Type.String(),
              content: Type.String(),
              key_points: Type.Array(Type.String()),
            },
            { additionalProperties: false },
          ),
        ),
        faq: Type.Array(Type.Object({ question: Type.String(), answer: Type.String() }, { additionalProperties: false })),
      },
      { additionalProperties: false },
    );
    const reply = await ask("Write a 900 word article about electric bikes for commuting.", {
      response_format: { type: "json_schema", json_schema: { name: "article", schema: JSON.parse(JSON.stringify(schema)), strict: true } },
    });
    const value = JSON.parse(reply.choices[0].message.content ?? "null");
    expect(Value.Check(schema, value)).toBe(true);
    expect(value.sections).toHaveLength(3);
    expect(value.faq).toHaveLength(3);
    expect(value.sections[0].key_points).toHaveLength(3);
    expect(value.meta_description.length).toBeLessThanOrEqual(155);
    expect(value.title.toLowerCase()).toContain("electric bikes");
    expect(value.content.startsWith("# ")).toBe(true);
    expect(Math.abs(wordCount(value.content) - 900)).toBeLessThanOrEqual(135);
    expect(value.faq[0].question.endsWith("?")).toBe(true);
  });

  test("json_schema with $defs references, nullable type arrays and array bounds", async () => {
    const schema = {
      type: "object",
      $defs: { step: { type: "object", properties: { order: { type: "integer" }, note: { type: ["string", "null"] } }, required: ["order", "note"], additionalProperties: false } },
      properties: {
        steps: { type: "array", items: { $ref: "#/$defs/step" }, minItems: 5 },
        tags: { type: "array", items: { type: "string" }, maxItems: 2 },
        status: { type: "string", enum: ["draft", "final"] },
      },
      required: ["steps", "tags", "status"],
      additionalProperties: false,
    };
    const reply = await ask("Plan the outline for an article on winter cycling.", {
      response_format: { type: "json_schema", json_schema: { name: "plan", schema, strict: true } },
    });
    const value = JSON.parse(reply.choices[0].message.content ?? "null");
    expect(Object.keys(value).sort()).toEqual(["status", "steps", "tags"]);
    expect(value.steps).toHaveLength(5);
    expect(value.steps.map((s: { order: number }) => s.order)).toEqual([1, 2, 3, 4, 5]);
    expect(typeof value.steps[0].note).toBe("string");
    expect(value.tags).toHaveLength(2);
    expect(value.status).toBe("draft");
  });

  test("json_object replies parse as an object", async () => {
    const reply = await ask("Summarise the benefits of rainwater harvesting as JSON.", { response_format: { type: "json_object" } });
    const value = JSON.parse(reply.choices[0].message.content ?? "null");
    expect(typeof value).toBe("object");
    expect(typeof value.title).toBe("string");
  });

  test("[[sim:fail]] answers 500 every time", async () => {
    const prompt = `[[sim:fail]] ${marker()}`;
    expect(await statusOf(ask(prompt))).toBe(500);
    expect(await statusOf(ask(prompt))).toBe(500);
  });

  test("[[sim:fail-once]] answers 500 the first time, then normally", async () => {
    const prompt = `Write about tea [[sim:fail-once]] ${marker()}`;
    expect(await statusOf(ask(prompt))).toBe(500);
    const reply = await ask(prompt);
    expect(reply.choices[0].message.content).toStartWith("# ");
  });

  test("models named unavailable* answer 503", async () => {
    expect(await statusOf(ask("hello", { model: "unavailable-model" }))).toBe(503);
  });

  test("[[sim:sleep=MS]] waits before answering and combines with echo", async () => {
    const started = performance.now();
    const reply = await ask("[[sim:sleep=300]][[sim:echo]]slow");
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(reply.choices[0].message.content).toBe("slow");
  });

  test("a missing bearer token is 401 and streaming is 400, both in OpenAI's error shape", async () => {
    const body = JSON.stringify({ model: "sim-fast", messages: [{ role: "user", content: "hi" }] });
    const anonymous = await fetch(`${sim.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(anonymous.status).toBe(401);
    const error = (await anonymous.json()) as { error: { message: string; type: string; code: string } };
    expect(error.error.type).toBe("invalid_request_error");
    expect(error.error.code).toBe("invalid_api_key");

    const streaming = await statusOf(openai.chat.completions.create({ model: "sim-fast", messages: [{ role: "user", content: "hi" }], stream: true }));
    expect(streaming).toBe(400);
  });

  test("array content parts and system messages are accepted", async () => {
    const reply = await openai.chat.completions.create({
      model: "sim-pro",
      messages: [
        { role: "system", content: "You are a careful editor." },
        { role: "user", content: [{ type: "text", text: "[[sim:echo]]part one" }] },
      ],
      temperature: 0.2,
    });
    expect(reply.choices[0].message.content).toBe("part one");
  });
});

describe("requests a real model honours", () => {
  test("a phrase asked for in quotes opens the reply, whichever model is asked", async () => {
    for (const model of ["sim-fast", "sim-real"]) {
      const reply = await ask("Article title: Home Baking\nRewrite the introduction in about 80 words. Use the phrase \"rye flour ratio\" in the first sentence.", { model });
      const firstParagraph = reply.choices[0]!.message.content!.split("\n\n").find((p) => !p.startsWith("#"))!;
      expect(firstParagraph.split(/(?<=[.!?])\s/)[0]!.toLowerCase()).toContain("rye flour ratio");
    }
  });

  test("a heading asked for alone comes back as one heading naming the phrase", async () => {
    const reply = await ask("Rename one section heading so that it includes the phrase \"espresso grinder\". Return the heading line only.\n\nThe heading: Getting Started");
    const content = reply.choices[0]!.message.content!;
    expect(content.split("\n")).toHaveLength(1);
    expect(content).toMatch(/^## .*Espresso Grinder/);
  });

  test("a meta description asked for comes back alone, within the characters asked", async () => {
    for (const title of ["Tea", "Choosing an Espresso Grinder for a Small Kitchen"]) {
      const reply = await ask(`Article title: ${title}\nWrite the meta description of this article: between 120 and 160 characters, spaces included. Return the description only.`);
      const content = reply.choices[0]!.message.content!;
      expect(content).not.toContain("\n");
      expect(content.length).toBeGreaterThanOrEqual(120);
      expect(content.length).toBeLessThanOrEqual(160);
    }
  });
});

describe("simulator endpoints", () => {
  test("counts calls per last user message, filters and resets", async () => {
    const tag = marker();
    await ask(`[[sim:echo]]first ${tag}`);
    await ask(`[[sim:echo]]first ${tag}`);
    await statusOf(ask(`[[sim:fail]]second ${tag}`));

    const filtered = (await (await fetch(`${sim.url}/_sim/calls?contains=${encodeURIComponent(tag)}`)).json()) as {
      calls: { prompt: string; count: number }[];
      total: number;
    };
    expect(filtered.calls).toEqual([
      { prompt: `[[sim:echo]]first ${tag}`, count: 2 },
      { prompt: `[[sim:fail]]second ${tag}`, count: 1 },
    ]);
    expect(filtered.total).toBe(3);

    const all = (await (await fetch(`${sim.url}/_sim/calls`)).json()) as { calls: unknown[] };
    expect(all.calls.length).toBeGreaterThanOrEqual(2);

    expect((await fetch(`${sim.url}/_sim/calls`, { method: "DELETE" })).status).toBe(200);
    const after = (await (await fetch(`${sim.url}/_sim/calls?contains=${encodeURIComponent(tag)}`)).json()) as { total: number };
    expect(after.total).toBe(0);
  });

  test("lists simulated models", async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(["sim-fast", "sim-pro", "sim-batch", "unavailable-model"]));
  });

  test("unknown routes are 404 JSON", async () => {
    const response = await fetch(`${sim.url}/nowhere`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toContain("application/json");
  });
});

describe("the call count", () => {
  test("keeps the most recent prompts up to its limit, each with its count", () => {
    const counter = new CallCounter(3);
    for (const prompt of ["a", "b", "a", "c", "d"]) counter.record(prompt);
    // "a" was first seen longest ago: it went when "d" came, although it was seen again since.
    expect(counter.report()).toEqual({ calls: [{ prompt: "b", count: 1 }, { prompt: "c", count: 1 }, { prompt: "d", count: 1 }], total: 3 });
    counter.record("c");
    expect(counter.report("c")).toEqual({ calls: [{ prompt: "c", count: 2 }], total: 2 });
  });
});

describe("batches", () => {
  test("round trip through files and batches with per-request directives", async () => {
    const line = (customId: string, content: string) =>
      JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/chat/completions", body: { model: "sim-batch", messages: [{ role: "user", content }] } });
    const jsonl = [line("a", "Write about urban beekeeping [[sim:words=120]]"), line("b", "[[sim:echo]]echoed in a batch"), line("c", "[[sim:fail]] broken")].join("\n");

    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl), "requests.jsonl"), purpose: "batch" });
    expect(file.object).toBe("file");
    expect(file.purpose).toBe("batch");
    expect((await openai.files.retrieve(file.id)).bytes).toBe(Buffer.byteLength(jsonl));

    const created = await openai.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    expect(created.status).toBe("validating");
    const seen = new Set<string>([created.status]);
    let batch = created;
    for (let i = 0; i < 100 && batch.status !== "completed"; i++) {
      await Bun.sleep(25);
      batch = await openai.batches.retrieve(created.id);
      seen.add(batch.status);
    }
    expect(batch.status).toBe("completed");
    expect(seen.has("in_progress")).toBe(true);
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    const output = (await (await openai.files.content(batch.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l));
    const byId = Object.fromEntries(output.map((o) => [o.custom_id, o]));
    expect(Object.keys(byId).sort()).toEqual(["a", "b"]);
    expect(byId.a.response.status_code).toBe(200);
    expect(byId.a.error).toBeNull();
    expect(byId.a.response.body.object).toBe("chat.completion");
    expect(Math.abs(wordCount(byId.a.response.body.choices[0].message.content) - 120)).toBeLessThanOrEqual(18);
    expect(byId.b.response.body.choices[0].message.content).toBe("echoed in a batch");

    const errors = (await (await openai.files.content(batch.error_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(errors).toHaveLength(1);
    expect(errors[0].custom_id).toBe("c");
    expect(errors[0].response.status_code).toBe(500);
  });

  test("a line with a malformed schema fails on its own: 400 in the error file, the batch and the simulator carry on", async () => {
    const line = (customId: string, extra: Record<string, unknown>) =>
      JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/chat/completions", body: { model: "sim-batch", messages: [{ role: "user", content: "Write about kites" }], ...extra } });
    const broken = { response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: null } } } } };
    const jsonl = [line("good", {}), line("broken", broken)].join("\n");
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl), "mixed.jsonl"), purpose: "batch" });
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    let batch = created;
    for (let i = 0; i < 100 && batch.status !== "completed"; i++) {
      await Bun.sleep(25);
      batch = await openai.batches.retrieve(created.id);
    }
    expect(batch.status).toBe("completed");
    expect(batch.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const errors = (await (await openai.files.content(batch.error_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(errors.map((e) => [e.custom_id, e.response.status_code])).toEqual([["broken", 400]]);
    // The same request made directly is the same 400, in OpenAI's error shape.
    expect(await statusOf(ask("Write about kites", broken as never))).toBe(400);
  });

  test("a batch can be cancelled while it is pending", async () => {
    const jsonl = JSON.stringify({ custom_id: "x", method: "POST", url: "/v1/chat/completions", body: { model: "sim-batch", messages: [{ role: "user", content: "hi" }] } });
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl), "one.jsonl"), purpose: "batch" });
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    const cancelling = await openai.batches.cancel(created.id);
    expect(cancelling.status).toBe("cancelling");
    await Bun.sleep(120);
    expect((await openai.batches.retrieve(created.id)).status).toBe("cancelled");
  });
});

describe("images", () => {
  /** The PNG's size from its header and its pixel rows, inflated from its IDAT chunk. */
  function decodePng(png: Buffer) {
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.subarray(12, 16).toString("ascii")).toBe("IHDR");
    const idat = png.indexOf("IDAT");
    const pixels = inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)));
    return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), pixels };
  }

  test("generates decodable PNGs of exactly the requested size, the same for the same prompt", async () => {
    const result = await openai.images.generate({ model: "sim-image", prompt: "a lighthouse at dusk", n: 2, size: "1536x1024" });
    expect(result.data).toHaveLength(2);
    const { width, height, pixels } = decodePng(Buffer.from(result.data![0].b64_json!, "base64"));
    expect([width, height]).toEqual([1536, 1024]);
    // One filter byte and three colour bytes per pixel, every row.
    expect(pixels.length).toBe(height * (1 + width * 3));

    const portrait = await openai.images.generate({ model: "sim-image", prompt: "a lighthouse at dusk", size: "1024x1536" });
    const tall = decodePng(Buffer.from(portrait.data![0].b64_json!, "base64"));
    expect([tall.width, tall.height]).toEqual([1024, 1536]);

    const again = await openai.images.generate({ model: "sim-image", prompt: "a lighthouse at dusk", n: 1, size: "1536x1024" });
    expect(again.data![0].b64_json).toBe(result.data![0].b64_json);
  });

  test("refuses a size it cannot make, and reports the prompts it received", async () => {
    expect(await statusOf(openai.images.generate({ model: "sim-image", prompt: "x", size: "huge" as "1024x1024" }))).toBe(400);
    const tag = marker();
    await openai.images.generate({ model: "sim-image", prompt: `a harbour ${tag}`, size: "1024x1024" });
    await openai.images.generate({ model: "sim-image", prompt: `a harbour ${tag}`, size: "1024x1024" });
    const report = (await (await fetch(`${sim.url}/_sim/image-prompts?contains=${encodeURIComponent(tag)}`)).json()) as { calls: { prompt: string; count: number }[]; total: number };
    expect(report).toEqual({ calls: [{ prompt: `a harbour ${tag}`, count: 2 }], total: 2 });
  });
});

describe("search", () => {
  interface SearxResult {
    url: string;
    title: string;
    content: string;
    engine: string;
    engines: string[];
    score: number;
    category: string;
  }
  interface SearxResponse {
    query: string;
    number_of_results: number;
    results: SearxResult[];
    answers: unknown[];
    suggestions: string[];
    corrections: unknown[];
    infoboxes: unknown[];
    unresponsive_engines: unknown[];
  }
  const searchFor = async (q: string): Promise<SearxResponse> => {
    const response = await fetch(`${sim.url}/search?q=${encodeURIComponent(q)}&format=json`);
    expect(response.status).toBe(200);
    return (await response.json()) as SearxResponse;
  };
  const articleText = (html: string): string =>
    (/<article[^>]*>([\s\S]*?)<\/article>/.exec(html)?.[1] ?? "").replace(/<[^>]+>/g, " ").replace(/&[a-z]+;/g, " ");

  test("returns SearXNG's JSON shape with results on the simulator's own pages", async () => {
    const body = await searchFor("indoor herb gardens");
    expect(body.query).toBe("indoor herb gardens");
    expect(body.results.length).toBe(8);
    expect(body.number_of_results).toBe(8);
    for (const key of ["answers", "corrections", "infoboxes", "unresponsive_engines"] as const) expect(body[key]).toEqual([]);
    expect(body.suggestions).toHaveLength(4);
    for (const question of body.suggestions) expect(question.endsWith("?")).toBe(true);
    for (const result of body.results) {
      expect(result.url.startsWith(`${sim.url}/pages/`)).toBe(true);
      expect(result.title.length).toBeGreaterThan(0);
      expect(result.content.length).toBeGreaterThan(0);
      expect(result.engines).toContain(result.engine);
      expect(typeof result.score).toBe("number");
      expect(result.category).toBe("general");
    }
    expect(await searchFor("indoor herb gardens")).toEqual(body);
  });

  test("linked pages load as cluttered HTML around an <article>, with one stub and one duplicate", async () => {
    const { results } = await searchFor("indoor herb gardens");
    const pages = await Promise.all(
      results.map(async (r) => {
        const response = await fetch(r.url);
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toContain("text/html");
        return { url: r.url, html: await response.text() };
      }),
    );
    const lengths = pages.map((p) => wordCount(articleText(p.html)));
    for (const page of pages) {
      expect(page.html).toContain("<article");
      expect(page.html).toContain("cookie");
      expect(page.html).toContain("<footer");
      expect(page.html).toContain("<nav");
      expect(articleText(page.html).toLowerCase()).toContain("herb gardens");
    }
    expect(lengths.filter((n) => n < 80)).toHaveLength(1);
    expect(lengths.filter((n) => n >= 300 && n <= 900)).toHaveLength(7);

    const canonicalOf = (html: string) => /<link rel="canonical" href="([^"]+)">/.exec(html)?.[1];
    const copies = pages.filter((p) => canonicalOf(p.html) !== p.url);
    expect(copies).toHaveLength(1);
    const original = pages.find((p) => p.url === canonicalOf(copies[0].html))!;
    expect(articleText(copies[0].html)).toBe(articleText(original.html));

    const again = await (await fetch(pages[0].url)).text();
    expect(again).toBe(pages[0].html);
  });

  test("nothing-usable points only at stubs and no-results returns nothing", async () => {
    const unusable = await searchFor("indoor herb gardens nothing-usable");
    expect(unusable.results.length).toBeGreaterThan(0);
    for (const result of unusable.results) {
      const html = await (await fetch(result.url)).text();
      expect(wordCount(articleText(html))).toBeLessThan(80);
    }
    const empty = await searchFor("indoor herb gardens no-results");
    expect(empty.results).toEqual([]);
    expect(empty.number_of_results).toBe(0);
  });
});
