// Pure pieces of the runner: exact USD arithmetic, the {outline} rule, what completion takes
// from the pipeline (content body, description, word count), and the originality heuristic.
import { describe, expect, test } from "bun:test";
import type { SnapshotStep } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { heuristicDetector, originalityDetector } from "../../services/generation-runner/src/domain/originality.ts";
import { descriptionOf, outlineOf, wordCountOf } from "../../services/generation-runner/src/domain/step-values.ts";
import { bodyOf } from "../../services/kit/src/article-envelope.ts";
import { costOfUsage, formatUsd, parseUsd, sumUsd } from "../../services/kit/src/rules/usd.ts";

const step = (stepNumber: number, outputFormat: string, role = ""): SnapshotStep => ({ stepNumber, outputFormat, role }) as SnapshotStep;

describe("USD amounts", () => {
  test("parse and format exactly, with at least two decimals", () => {
    expect(formatUsd(0n)).toBe("0.00");
    expect(formatUsd(parseUsd("2.5"))).toBe("2.50");
    expect(formatUsd(parseUsd("0.000000000001"))).toBe("0.000000000001");
    expect(formatUsd(parseUsd("12.340"))).toBe("12.34");
    expect(() => parseUsd("-1")).toThrow();
  });

  test("a call costs its tokens at per-million prices, without float drift", () => {
    const prices = { inputPricePerMillion: "0.10", outputPricePerMillion: "0.40" };
    const one = costOfUsage(prices, { promptTokens: 1000, completionTokens: 500 });
    expect(formatUsd(one)).toBe("0.0003");
    expect(formatUsd(sumUsd(Array.from({ length: 10_000 }, () => one)))).toBe("3.00");
    expect(formatUsd(costOfUsage(prices, { promptTokens: 1000, completionTokens: 500 }, { numerator: 1n, denominator: 2n }))).toBe("0.00015");
  });
});

describe("{outline}", () => {
  test("is the built-in outline step's output", () => {
    const steps = [step(1, "markdown", "research"), step(2, "json", "outline"), step(3, "markdown", "draft")];
    expect(outlineOf(steps, new Map([[1, "notes"], [2, '{"sections":[]}']]))).toBe('{"sections":[]}');
  });

  test("in a custom workflow, is the first json step that has run", () => {
    const steps = [step(1, "text"), step(3, "json"), step(5, "json"), step(7, "markdown")];
    expect(outlineOf(steps, new Map([[1, "a"]]))).toBe("");
    expect(outlineOf(steps, new Map([[1, "a"], [3, '{"plan":1}'], [5, '{"plan":2}']]))).toBe('{"plan":1}');
  });
});

describe("completion values", () => {
  const envelope = JSON.stringify({ article: { content: "# Title\n\nOne two three four.", meta_description: "From the envelope." } });

  test("the body of a JSON envelope is article.content; other content is its own body", () => {
    expect(bodyOf(envelope)).toBe("# Title\n\nOne two three four.");
    expect(bodyOf("# Plain\n\ntext")).toBe("# Plain\n\ntext");
    expect(bodyOf('{"not":"an envelope"}')).toBe('{"not":"an envelope"}');
  });

  test("words are counted in the body, markup aside", () => {
    expect(wordCountOf("# Title\n\n- one two\n- three")).toBe(4);
    expect(wordCountOf(envelope)).toBe(5);
  });

  test("the description comes from the meta step, else the envelope, else a custom json step", () => {
    const builtin = [step(1, "markdown", "draft"), step(2, "json", "meta"), step(3, "markdown", "polish")];
    expect(descriptionOf(builtin, new Map([[2, '{"meta_title":"T","meta_description":"From meta."}']]), "# Body")).toBe("From meta.");
    expect(descriptionOf([step(1, "json")], new Map([[1, envelope]]), envelope)).toBe("From the envelope.");
    const custom = [step(1, "json"), step(2, "markdown")];
    expect(descriptionOf(custom, new Map([[1, '{"meta_description":"Custom."}'], [2, "# Body"]]), "# Body")).toBe("Custom.");
    expect(descriptionOf([step(1, "markdown")], new Map([[1, "# Body"]]), "# Body")).toBeNull();
  });
});

describe("the heuristic originality detector", () => {
  const machine = Array.from(
    { length: 12 },
    (_, i) => `Moreover, it is important to note that topic ${i} plays a crucial role in the ever-evolving landscape of modern life today.`,
  ).join(" ");
  const human = `I bought my first grinder on a whim. Big mistake? Not really. It was loud, slow, and it sprayed grounds across the counter like confetti at a wedding nobody wanted to attend, but the coffee tasted better than anything I had made before. So I kept it. Two years later the burrs wore down. My neighbour, a retired machinist who fixes everything from lawnmowers to clocks, took one look and laughed. Replace them, he said. Cheap. Then he made me an espresso on a machine older than I am, and honestly it was the best cup I have had in a decade. Lesson learned.`;

  test("scores uniform, stock-phrase prose higher than varied prose", async () => {
    const machineScore = await heuristicDetector.score(machine);
    const humanScore = await heuristicDetector.score(human);
    expect(machineScore).toBeGreaterThan(60);
    expect(humanScore).toBeLessThan(35);
    for (const score of [machineScore, humanScore]) expect(Number.isInteger(score) && score >= 0 && score <= 100).toBe(true);
  });

  test("gives short texts a neutral 50 and is chosen by name", async () => {
    expect(await heuristicDetector.score("Too short to judge.")).toBe(50);
    expect(originalityDetector("heuristic")).toBe(heuristicDetector);
    expect(() => originalityDetector("magic")).toThrow("unknown detector");
  });
});
