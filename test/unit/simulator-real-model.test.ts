// The simulator's real-model profile (model sim-real): long requests under-written, short ones
// overshot, no call past its ceiling, one call in five cut mid-sentence; the same call always
// answered the same way; other models still writing to the word.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { cutMidSentence, fillerHabitOf, isCutShort, REAL_MODEL, REAL_MODEL_PROFILE, wordsWritten } from "../../services/model-simulator/src/real-model-writing.ts";
import { countWords } from "../../services/kit/src/words.ts";
import { GERMAN, languageAskedFor } from "../../services/model-simulator/src/prose-banks.ts";
import { detectAll } from "tinyld";

let sim: RunningSimulator;
let openai: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, batchDelayMs: 200 });
  openai = new OpenAI({ apiKey: "test", baseURL: sim.url + "/v1", maxRetries: 0 });
});

afterAll(async () => {
  await sim.stop();
});

const TOPICS = ["sourdough baking", "trail running shoes", "home espresso", "balcony gardening", "budget travel in Japan", "learning the cello", "electric bikes", "winter camping", "houseplant care", "password managers"];
const promptFor = (topic: string, words: number) => `Write an article about ${topic}.\nTitle: ${topic}\nLength: about ${words} words.`;

async function write(content: string, model = REAL_MODEL) {
  const reply = await openai.chat.completions.create({ model, messages: [{ role: "user", content }] });
  return { text: reply.choices[0]!.message.content ?? "", finish: reply.choices[0]!.finish_reason, tokens: reply.usage!.completion_tokens };
}

/** Replies to the same request at many topics and lengths (40 calls each). */
async function replies(words: number) {
  return Promise.all(TOPICS.flatMap((topic) => [0, 1, 2, 3].map((n) => write(promptFor(`${topic} ${n}`, words)))));
}

const repeatsAParagraph = (text: string) => {
  const paragraphs = text.split("\n\n").filter((p) => p.split(" ").length > 12);
  return new Set(paragraphs).size < paragraphs.length;
};

const endsASentence = (text: string) => /[.!?]\s*$/.test(text);

describe("the profile's lengths", () => {
  test("short requests are overshot by 20-30%, long ones get 55-70%, none past the ceiling", () => {
    for (let i = 0; i < 200; i++) {
      const seed = `seed ${i}`;
      const short = wordsWritten(300, seed);
      expect(short).toBeGreaterThanOrEqual(Math.floor(300 * 1.2));
      expect(short).toBeLessThanOrEqual(Math.ceil(300 * 1.3));
      const long = wordsWritten(2_000, seed);
      expect(long).toBeGreaterThanOrEqual(Math.floor(2_000 * 0.55));
      expect(long).toBeLessThanOrEqual(Math.ceil(2_000 * 0.7));
      for (const asked of [3_000, 6_000, 10_000]) {
        const written = wordsWritten(asked, seed);
        expect(written).toBeGreaterThanOrEqual(REAL_MODEL_PROFILE.ceiling[0]);
        expect(written).toBeLessThanOrEqual(REAL_MODEL_PROFILE.ceiling[1]);
      }
      // Between short and long the share slides from one range to the other.
      const middle = wordsWritten(900, seed) / 900;
      expect(middle).toBeGreaterThan(0.55);
      expect(middle).toBeLessThan(1.3);
    }
  });

  test("about one call in five is cut short, chosen by the request, not at random", () => {
    const cut = Array.from({ length: 1_000 }, (_, i) => isCutShort(`request ${i}`)).filter(Boolean).length;
    expect(cut).toBeGreaterThan(150);
    expect(cut).toBeLessThan(250);
    expect(isCutShort("request 7")).toBe(isCutShort("request 7"));
  });

  test("a cut falls inside a sentence of prose, never in a heading or at a sentence's end", () => {
    const text = "# Title Here\n\nOne full sentence here. Another sentence that goes on for a while.\n\n## A Heading Line\n\nThe last paragraph has words in it.\n";
    for (let i = 0; i < 50; i++) {
      const cut = cutMidSentence(text, `seed ${i}`);
      expect(text.startsWith(cut)).toBe(true);
      expect(cut.length).toBeLessThan(text.length);
      expect(endsASentence(cut)).toBe(false);
      expect(cut.split("\n").at(-1)!.startsWith("#")).toBe(false);
    }
  });
});

describe("sim-real over the API", () => {
  test("a 300-word request comes back 20-30% long unless cut", async () => {
    for (const reply of await replies(300)) {
      const words = countWords(reply.text);
      if (reply.finish === "length") expect(words).toBeLessThan(300 * 1.3 + 3);
      else {
        expect(words).toBeGreaterThanOrEqual(300 * 1.2 - 3);
        expect(words).toBeLessThanOrEqual(300 * 1.3 + 3);
      }
    }
  });

  test("a 3,000-word request comes back at no more than 1,500 words; cut replies end mid-sentence with finish_reason length", async () => {
    const all = await replies(3_000);
    const cut = all.filter((r) => r.finish === "length");
    expect(cut.length).toBeGreaterThan(0);
    expect(cut.length).toBeLessThan(all.length / 2);
    for (const reply of all) {
      const words = countWords(reply.text);
      expect(words).toBeLessThanOrEqual(REAL_MODEL_PROFILE.ceiling[1] + 3);
      if (reply.finish === "length") {
        expect(endsASentence(reply.text)).toBe(false);
        expect(words).toBeLessThan(REAL_MODEL_PROFILE.ceiling[1]);
      } else {
        expect(reply.finish).toBe("stop");
        expect(endsASentence(reply.text)).toBe(true);
        expect(words).toBeGreaterThanOrEqual(REAL_MODEL_PROFILE.ceiling[0] - 3);
      }
      // Usage counts what was written, cut or not.
      expect(reply.tokens).toBe(Math.round(reply.text.split(/\s+/).filter(Boolean).length * 1.3));
    }
  });

  test("about one reply in six carries a padding habit, as long as it would be without", async () => {
    const all = await replies(800);
    const padded = all.filter((r) => /As an AI language model|In conclusion, /.test(r.text) || repeatsAParagraph(r.text));
    expect(padded.length).toBeGreaterThan(0);
    expect(padded.length).toBeLessThan(all.length / 3);
    for (const reply of all.filter((r) => r.finish === "stop")) {
      expect(countWords(reply.text)).toBeGreaterThanOrEqual(800 * 0.55 - 3);
      expect(countWords(reply.text)).toBeLessThanOrEqual(800 * 1.3 + 3);
    }
    const habits = Array.from({ length: 1_200 }, (_, i) => fillerHabitOf(800, `request ${i}`)).filter(Boolean);
    expect(habits.length).toBeGreaterThan(150);
    expect(habits.length).toBeLessThan(250);
    expect(new Set(habits)).toEqual(new Set(["model talk", "in conclusion", "repeated paragraph"]));
    // Short replies (an introduction, a heading) carry none.
    expect(Array.from({ length: 200 }, (_, i) => fillerHabitOf(120, `request ${i}`)).filter(Boolean)).toEqual([]);
  });

  test("the same request is answered the same way", async () => {
    const prompt = promptFor("sourdough baking", 3_000);
    const [first, again] = [await write(prompt), await write(prompt)];
    expect(again).toEqual(first);
  });

  test("a words directive is asked for like any length: the model still under-writes it", async () => {
    const { text, finish } = await write("[[sim:words=2400]] Write about home espresso.");
    expect(countWords(text)).toBeLessThanOrEqual(REAL_MODEL_PROFILE.ceiling[1] + 3);
    if (finish === "stop") expect(countWords(text)).toBeGreaterThanOrEqual(2_400 * 0.55 - 3);
  });

  test("JSON replies are whole, and other models still write to the word", async () => {
    const json = await openai.chat.completions.create({
      model: REAL_MODEL,
      messages: [{ role: "user", content: promptFor("electric bikes", 3_000) }],
      response_format: { type: "json_object" },
    });
    expect(json.choices[0]!.finish_reason).toBe("stop");
    expect(() => JSON.parse(json.choices[0]!.message.content!)).not.toThrow();
    for (const topic of TOPICS) {
      const exact = await write(promptFor(topic, 3_000), "sim-fast");
      expect(exact.finish).toBe("stop");
      expect(Math.abs(countWords(exact.text) - 3_000)).toBeLessThanOrEqual(5);
    }
  });

  test("batched calls to sim-real write like live ones", async () => {
    const prompt = promptFor("winter camping", 3_000);
    const line = { custom_id: "one", method: "POST", url: "/v1/chat/completions", body: { model: REAL_MODEL, messages: [{ role: "user", content: prompt }] } };
    const file = await openai.files.create({ file: await toFile(Buffer.from(JSON.stringify(line)), "requests.jsonl"), purpose: "batch" });
    let batch = await openai.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    while (batch.status !== "completed") {
      await Bun.sleep(100);
      batch = await openai.batches.retrieve(batch.id);
    }
    const output = JSON.parse((await (await openai.files.content(batch.output_file_id!)).text()).trim());
    const live = await write(prompt);
    expect(output.response.body.choices[0].message.content).toBe(live.text);
    expect(countWords(live.text)).toBeLessThanOrEqual(REAL_MODEL_PROFILE.ceiling[1] + 3);
  });
});

describe("the language asked for", () => {
  test("a prompt naming German as the article's language is answered in German; others in English", async () => {
    for (const prompt of ["Article language code: de.", "Rewrite it (language de, friendly tone).", "Keep the language (de) and the length.", "Write in the article's language (de); no notes."]) {
      expect(languageAskedFor(prompt)).toBe("de");
    }
    for (const prompt of ["Article language code: en.", "the language model designs", "language of the day", "language: deutsch-ish"]) {
      expect(languageAskedFor(prompt)).toBeUndefined();
    }
    const german = await write("Write an article about winter camping.\nTitle: Winter Camping\nArticle language code: de.\nLength: about 500 words.");
    expect(detectAll(german.text.replace(/^#.*$/gm, ""))[0]!.lang).toBe("de");
    const english = await write("Write an article about winter camping.\nTitle: Winter Camping\nArticle language code: en.\nLength: about 500 words.");
    expect(detectAll(english.text.replace(/^#.*$/gm, ""))[0]!.lang).toBe("en");
    // Its closers keep the word counts they are filed under, so lengths land as in English.
    for (const [words, closers] of Object.entries(GERMAN.closers)) for (const closer of closers) expect(countWords(closer)).toBe(Number(words));
  });
});
