// The plain-number series behind the per-request and per-call metrics are exposed exactly as
// prom-client's own Counter and Histogram would expose the same observations.
import { describe, expect, test } from "bun:test";
import client from "prom-client";
import { CounterSeries, HistogramSeries } from "../../services/kit/src/metric-series.ts";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED = [0.0005, 0.001, 0.004, 0.05, 0.05, 0.7, 3];

/** The exposition of one metric, sample lines sorted (series order is not part of the format). */
async function exposition(registry: client.Registry, name: string): Promise<string[]> {
  const text = await registry.getSingleMetricAsString(name);
  const [help, type, ...samples] = text.split("\n");
  return [help!, type!, ...samples.sort()];
}

describe("metric series", () => {
  test("a histogram's buckets, sum and count are prom-client's", async () => {
    const ours = new HistogramSeries("test_series_seconds", "Time of something.", BUCKETS);
    const reference = new client.Registry();
    const theirs = new client.Histogram({ name: "test_series_seconds", help: "Time of something.", labelNames: ["route", "method"], buckets: BUCKETS, registers: [reference] });
    const cell = ours.cell({ route: "/v1/articles/:id", method: "GET" });
    const other = ours.cell({ route: "/v1/articles", method: "POST" });
    for (const v of OBSERVED) {
      cell.observe(v);
      theirs.labels("/v1/articles/:id", "GET").observe(v);
    }
    other.observe(0.02);
    theirs.labels("/v1/articles", "POST").observe(0.02);
    expect(await exposition(client.register, "test_series_seconds")).toEqual(await exposition(reference, "test_series_seconds"));
  });

  test("a counter's series are prom-client's", async () => {
    const ours = new CounterSeries("test_series_total", "Things done.");
    const reference = new client.Registry();
    const theirs = new client.Counter({ name: "test_series_total", help: "Things done.", labelNames: ["code"], registers: [reference] });
    const ok = ours.cell({ code: "ok" });
    const failed = ours.cell({ code: "unavailable" });
    ok.value += 3;
    failed.value++;
    theirs.labels("ok").inc(3);
    theirs.labels("unavailable").inc();
    expect(await exposition(client.register, "test_series_total")).toEqual(await exposition(reference, "test_series_total"));
  });
});
