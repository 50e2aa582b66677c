// A run's progress reports: sent in order without holding the run up, coalesced to the latest
// while one is under way, at most one per interval, flushed on demand, dropped once superseded,
// and a failed report surfaces at the run's next report. With a keep-alive, a silent run repeats
// its latest report (a failed repeat is not the run's failure) until completion supersedes it.
import { describe, expect, test } from "bun:test";
import { ProgressReports, type ProgressReport } from "../../services/generation-runner/src/domain/progress-reports.ts";
import { eventually } from "../harness/eventually.ts";

const at = (currentStep: string): ProgressReport => ({ status: "writing", currentStep, cost: "0.00" });

/** Resolves when `reached()` holds, checked each time `changed` is called; fails after 5 s. */
function signal() {
  const waiters = new Set<() => void>();
  return {
    changed: () => waiters.forEach((check) => check()),
    until(reached: () => boolean, what: string): Promise<void> {
      if (reached()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`timed out waiting for ${what}`))), 5_000);
        const check = () => {
          if (!reached()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
  };
}

/**
 * A sender that records the reports it was handed. Each send takes `delayMs`; with `held`, it
 * also waits until the test calls release(), so a report stays under way as long as a test needs.
 */
function recorder(delayMs = 5, { held = false } = {}) {
  const sent: string[] = [];
  let started = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let release!: () => void;
  const released = held ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const progress = signal();
  const send = async (report: ProgressReport) => {
    started++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    progress.changed();
    await Bun.sleep(delayMs);
    await released;
    sent.push(report.currentStep);
    inFlight--;
    progress.changed();
  };
  return {
    sent,
    send,
    maxInFlight: () => maxInFlight,
    release: () => release?.(),
    /** Resolves once `n` reports have been handed to the sender (under way or sent). */
    started: (n: number) => progress.until(() => started >= n, `${n} report(s) under way`),
    /** Resolves once `n` reports are in. */
    sentCount: (n: number) => progress.until(() => sent.length >= n, `${n} report(s) sent`),
  };
}

describe("ProgressReports", () => {
  test("reports made while one is under way collapse into the latest", async () => {
    const r = recorder(5, { held: true });
    const reports = new ProgressReports(r.send, 0);
    reports.report(at("Step 1"));
    await r.started(1);
    reports.report(at("Step 2"));
    reports.report(at("Step 3"));
    reports.report(at("Step 4"));
    r.release();
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
    // Not sent on its own within 10 ms of an interval of a minute.
    await Bun.sleep(10);
    expect(r.sent).toEqual([]);
    reports.report(at("Humanizing"));
    await reports.flush();
    expect(r.sent).toEqual(["Humanizing"]);
  });

  test("supersede drops the unsent report and waits for the one under way", async () => {
    const r = recorder(5, { held: true });
    const reports = new ProgressReports(r.send, 0);
    reports.report(at("Step 1"));
    await r.started(1);
    reports.report(at("Step 2"));
    const superseded = reports.supersede();
    r.release();
    await superseded;
    expect(r.sent).toEqual(["Step 1"]);
  });

  test("a failed report makes the next report and flush throw it", async () => {
    const reports = new ProgressReports(async () => {
      throw new Error("article-store is unavailable");
    }, 0);
    reports.report(at("Step 1"));
    // flush waits for the report under way, so the failure is in once it throws.
    await expect(reports.flush()).rejects.toThrow("article-store is unavailable");
    expect(() => reports.report(at("Step 2"))).toThrow("article-store is unavailable");
    await expect(reports.flush()).rejects.toThrow("article-store is unavailable");
  });

  test("a run silent for the keep-alive repeats its latest report", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 0, 40);
    reports.report(at("Slow step"));
    await r.sentCount(2);
    reports.stop();
    expect(r.sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(r.sent)).toEqual(new Set(["Slow step"]));
  });

  test("nothing is repeated before the run's first report", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 0, 20);
    // Nothing goes out over four keep-alive periods.
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
    // A third call is a keep-alive sent after the failed one was dealt with.
    await eventually(async () => calls, (n) => n >= 3, 5_000, "a keep-alive after a failed one");
    expect(() => reports.report(at("Step 2"))).not.toThrow();
    reports.stop();
  });

  test("once completion supersedes the reports, nothing is repeated", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 0, 20);
    reports.report(at("Step 1"));
    await reports.supersede();
    const sent = r.sent.length;
    // Nothing goes out over four keep-alive periods.
    await Bun.sleep(80);
    expect(r.sent.length).toBe(sent);
  });

  test("after stop nothing more is sent", async () => {
    const r = recorder(1);
    const reports = new ProgressReports(r.send, 30);
    reports.report(at("Step 1"));
    await r.sentCount(1);
    reports.report(at("Step 2"));
    reports.stop();
    // Step 2 would have gone out 30 ms after Step 1: nothing does over 80 ms.
    await Bun.sleep(80);
    expect(r.sent).toEqual(["Step 1"]);
  });
});
