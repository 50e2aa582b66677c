// Trace sampling is decided once where a trace starts, and every span, call and job it leads to
// follows that decision: a left-out trace exports nothing anywhere and passes on flag 00.
import { describe, expect, test } from "bun:test";
import { keptShareOf } from "../../services/kit/src/tracing.ts";

interface ProbeResult {
  kept: number;
  handedOn: string[];
  keptJobSpan: boolean;
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

describe("trace sampling", () => {
  test("the sampler settings give the share of new traces kept", () => {
    expect(keptShareOf({})).toBe(1);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "always_off" })).toBe(0);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })).toBe(0);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" })).toBe(0.01);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })).toBe(1);
    expect(keptShareOf({ OTEL_TRACES_SAMPLER: "traceidratio" })).toBe(1);
  });

  test("every trace kept: roots and children are exported and hand on flag 01", async () => {
    const result = await probe({ ROOTS: "3" });
    expect(result.kept).toBe(3);
    for (const traceparent of result.handedOn) expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const roots = result.exported.filter((s) => s.name === "root");
    expect(roots.map((s) => s.traceId).sort()).toEqual(result.handedOn.map(traceIdOf).sort());
    expect(result.exported.filter((s) => s.name === "child")).toHaveLength(3);
  });

  test("traces left out make no span anywhere but hand their ids on with flag 00; a kept caller is still followed", async () => {
    const result = await probe({ ROOTS: "50", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" });
    expect(result.kept).toBe(0);
    expect(result.handedOn).toHaveLength(50);
    for (const traceparent of result.handedOn) expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(new Set(result.handedOn.map(traceIdOf)).size).toBe(50);
    expect(result.leftOutJob).toBe("00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");
    expect(result.keptJobSpan).toBe(true);
    expect(result.exported).toEqual([{ traceId: "0af7651916cd43dd8448eb211c80319c", name: "job of a kept trace" }]);
  });

  test("a share keeps about that share of new traces, each whole", async () => {
    const result = await probe({ ROOTS: "2000", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" });
    // 500 expected; outside 380-620 has a probability far below one in a million.
    expect(result.kept).toBeGreaterThan(380);
    expect(result.kept).toBeLessThan(620);
    const exportedRoots = result.exported.filter((s) => s.name === "root").length;
    const exportedChildren = result.exported.filter((s) => s.name === "child").length;
    expect(exportedRoots).toBe(result.kept);
    expect(exportedChildren).toBe(result.kept);
  });
});
