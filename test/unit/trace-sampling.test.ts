// Trace sampling is decided once where work enters a process (a request, a call or a job without
// a traceparent), and every span, call and job of that work follows the decision: a left-out
// trace exports nothing anywhere and hands on flag 00; work outside any trace starts none.
import { describe, expect, test } from "bun:test";
import { keptShareOf } from "../../services/kit/src/tracing.ts";

interface ProbeResult {
  kept: number;
  handedOn: string[];
  calledWith: string[];
  outsideCall: string;
  outsideHandOff: string;
  outsideChildRan: boolean;
  leftOutCall: string;
  keptCall: string;
  /** What a call arriving with no traceparent, or an unreadable one, ran under. */
  freshCall: string;
  malformedCall: string;
  keptJob: string;
  leftOutJob: string;
  exported: { traceId: string; name: string }[];
}

async function probe(env: Record<string, string>): Promise<ProbeResult> {
  const child = Bun.spawn([process.execPath, new URL("../harness/trace-sampling-probe.ts", import.meta.url).pathname], {
    env: { ...process.env, OTEL_TRACES_SAMPLER: undefined, OTEL_TRACES_SAMPLER_ARG: undefined, OTEL_BSP_SCHEDULE_DELAY: "50", ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

const traceIdOf = (traceparent: string) => traceparent.split("-")[1];
const LEFT_OUT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/;
const KEPT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

/** What holds whatever the share: work outside a trace starts none, and callers' decisions are followed. */
function expectCallersFollowed(result: ProbeResult) {
  expect(result.outsideCall).toMatch(LEFT_OUT);
  expect(result.outsideHandOff).toMatch(LEFT_OUT);
  expect(result.outsideChildRan).toBe(true);
  expect(result.leftOutCall).toMatch(LEFT_OUT);
  expect(traceIdOf(result.keptCall)).toBe("3af7651916cd43dd8448eb211c80319c");
  expect(result.keptCall).toMatch(KEPT);
  expect(traceIdOf(result.keptJob)).toBe("0af7651916cd43dd8448eb211c80319c");
  expect(result.leftOutJob).toMatch(LEFT_OUT);
  const names = result.exported.map((s) => s.name);
  expect(names).toContain("probe.v1.Probe/Ask");
  expect(names).toContain("job of a kept trace");
  expect(names).not.toContain("child outside a trace");
  expect(names).not.toContain("job of a left-out trace");
  // The one call served under flag 00 made no span: besides the calls made in kept traces, the
  // served calls exported are the kept one and those that started traces of their own.
  const started = [result.freshCall, result.malformedCall].filter((t) => KEPT.test(t)).map(traceIdOf);
  expect(result.exported.filter((s) => s.name === "probe.v1.Probe/Ask" && s.traceId !== "3af7651916cd43dd8448eb211c80319c" && !started.includes(s.traceId)).length).toBe(
    result.calledWith.filter((t) => t.endsWith("-01")).length,
  );
  for (const traceId of started) expect(result.exported.filter((s) => s.traceId === traceId).map((s) => s.name)).toEqual(["probe.v1.Probe/Ask"]);
}

describe("trace sampling", () => {
  test("the sampler settings give the share of new traces kept", () => {
    expect(keptShareOf({})).toBe(1);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "always_off" })).toBe(0);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })).toBe(0);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" })).toBe(0.01);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })).toBe(1);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "traceidratio" })).toBe(1);
  });

  test("every trace kept: roots, children and calls are exported in one trace each and hand on flag 01", async () => {
    const result = await probe({ ROOTS: "3" });
    expect(result.kept).toBe(3);
    for (const traceparent of [...result.handedOn, ...result.calledWith]) expect(traceparent).toMatch(KEPT);
    const roots = result.exported.filter((s) => s.name === "root");
    expect(roots.map((s) => s.traceId).sort()).toEqual(result.handedOn.map(traceIdOf).sort());
    expect(result.calledWith.map(traceIdOf)).toEqual(result.handedOn.map(traceIdOf));
    expect(result.exported.filter((s) => s.name === "child")).toHaveLength(3);
    // Calls arriving with no traceparent, or one that cannot be read, start traces of their own.
    expect(result.freshCall).toMatch(KEPT);
    expect(result.malformedCall).toMatch(KEPT);
    expect(new Set([traceIdOf(result.freshCall), traceIdOf(result.malformedCall), ...result.handedOn.map(traceIdOf)]).size).toBe(5);
    expectCallersFollowed(result);
  });

  test("traces left out make no span anywhere, and what they call or hand on carries flag 00", async () => {
    const result = await probe({ ROOTS: "50", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" });
    expect(result.kept).toBe(0);
    expect(result.handedOn).toHaveLength(50);
    for (const traceparent of [...result.handedOn, ...result.calledWith]) expect(traceparent).toMatch(LEFT_OUT);
    expect(result.exported.filter((s) => s.name === "root" || s.name === "child")).toEqual([]);
    expect(result.freshCall).toMatch(LEFT_OUT);
    expect(result.malformedCall).toMatch(LEFT_OUT);
    expectCallersFollowed(result);
  });

  test("a share keeps about that share of new traces, each whole", async () => {
    const result = await probe({ ROOTS: "2000", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" });
    // 500 expected; outside 380-620 has a probability far below one in a million.
    expect(result.kept).toBeGreaterThan(380);
    expect(result.kept).toBeLessThan(620);
    expect(result.exported.filter((s) => s.name === "root").length).toBe(result.kept);
    expect(result.exported.filter((s) => s.name === "child").length).toBe(result.kept);
    expect(result.calledWith.filter((t) => t.endsWith("-01")).length).toBe(result.kept);
    expectCallersFollowed(result);
  });
});
