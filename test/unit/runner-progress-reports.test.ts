// A run's progress reports: sent in order without holding the run up, coalesced to the latest
// while one is under way, at most one per interval, flushed on demand, dropped once superseded,
// and a failed report surfaces at the run's next report. With a keep-alive, a silent run repeats
// its latest report (a failed repeat is not the run's failure) until completion supersedes it.
import { describe, expect, test } from "bun:test";
import { ProgressReports, type ProgressReport } from "../../services/generation-runner/src/domain/progress-reports.ts";

const at = (currentStep: string): ProgressReport => ({ status: "writing", currentStep, cost: "0.00" });

function recorder(delayMs = 5) {
  const sent: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const send = async (report: ProgressReport) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await Bun.sleep(delayMs);
    sent.push(report.currentStep);
    inFlight--;
  };
  return { sent, send, maxInFlight: () => maxInFlight };
}

describe("ProgressReports", () => {
  test("reports made while one is under way collapse into the latest", async () => {
    const r = recorder();
    const reports = new ProgressReports(r.send, 0);
    reports.report(at("Step 1"));
    await Bun.sleep(1);
    reports.report(at("Step 2"));
    reports.report(at("Step 3"));
    reports.report(at("Step 4"));
    await reports.flush();
    expect(r.sent).toEqual(["Step 1", "Step 4"]);
    expect(r.maxInFlight()).toBe(1);
  });

  test("report() returns before article-store answers", () => {
    let answered = false;
    const reports = new ProgressReports(async () => {
      await Bun.sleep(50);
      answered = true;
    });
    reports.report(at("Outline"));
    expect(answered).toBe(false);
  });

  test("the first report waits one interval after the run began, and each later one an interval after the last", async () => {
    // When each report went out, not fixed sleeps: a loaded machine runs timers late, never early.
    const sent: { step: string; at: number }[] = [];
    const began = performance.now();
    const reports = new ProgressReports(async (report) => {
      sent.push({ step: report.currentStep, at: performance.now() });
    }, 100);
    const sentCount = async (n: number) => {
      while (sent.length < n) await Bun.sleep(5);
    };
    reports.report(at("Step 1"));
    await sentCount(1);
    // Timers may fire up to a millisecond early of the clock read here.
    expect(sent[0]!.at - began).toBeGreaterThanOrEqual(99);
    reports.report(at("Step 2"));
    reports.report(at("Step 3"));
    await sentCount(2);
    expect(sent.map((s) => s.step)).toEqual(["Step 1", "Step 3"]);
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(99);
  });

  test("a run that completes within the interval sends nothing once completion supersedes its reports", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 250);
    reports.report(at("Step 1"));
    reports.report(at("Step 2"));
    await reports.supersede();
    expect(r.sent).toEqual([]);
  });

  test("flush sends what is queued without waiting for the interval", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 60_000);
    reports.report(at("Draft"));
    await Bun.sleep(10);
    expect(r.sent).toEqual([]);
    reports.report(at("Humanizing"));
    await reports.flush();
    expect(r.sent).toEqual(["Humanizing"]);
  });

  test("supersede drops the unsent report and waits for the one under way", async () => {
    const r = recorder(20);
    const reports = new ProgressReports(r.send, 0);
    reports.report(at("Step 1"));
    await Bun.sleep(1);
    reports.report(at("Step 2"));
    await reports.supersede();
    expect(r.sent).toEqual(["Step 1"]);
  });

  test("a failed report makes the next report and flush throw it", async () => {
    const reports = new ProgressReports(async () => {
      throw new Error("article-store is unavailable");
    }, 0);
    reports.report(at("Step 1"));
    await Bun.sleep(5);
    expect(() => reports.report(at("Step 2"))).toThrow("article-store is unavailable");
    expect(reports.flush()).rejects.toThrow("article-store is unavailable");
  });

  test("a run silent for the keep-alive repeats its latest report", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 0, 40);
    reports.report(at("Slow step"));
    await Bun.sleep(150);
    reports.stop();
    expect(r.sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(r.sent)).toEqual(new Set(["Slow step"]));
  });

  test("nothing is repeated before the run's first report", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 0, 20);
    await Bun.sleep(80);
    reports.stop();
    expect(r.sent).toEqual([]);
  });

  test("a failed keep-alive does not fail the run", async () => {
    let calls = 0;
    const reports = new ProgressReports(async () => {
      if (++calls > 1) throw new Error("article-store is unavailable");
    }, 0, 20);
    reports.report(at("Step 1"));
    await Bun.sleep(100);
    expect(calls).toBeGreaterThan(1);
    expect(() => reports.report(at("Step 2"))).not.toThrow();
    reports.stop();
  });

  test("once completion supersedes the reports, nothing is repeated", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 0, 20);
    reports.report(at("Step 1"));
    await reports.supersede();
    const sent = r.sent.length;
    await Bun.sleep(80);
    expect(r.sent.length).toBe(sent);
  });

  test("after stop nothing more is sent", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 30);
    reports.report(at("Step 1"));
    await Bun.sleep(50);
    reports.report(at("Step 2"));
    reports.stop();
    await Bun.sleep(80);
    expect(r.sent).toEqual(["Step 1"]);
  });
});
