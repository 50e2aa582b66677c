// The alert rules' unit tests (deploy/k8s/monitoring/alerts.test.yaml), run by Debian's promtool:
// the PrometheusRule's groups are written as a plain rule file (alerts.rules.yaml) into a temporary
// directory beside a copy of the test file, then `promtool check rules` and `promtool test rules`
// run there. Every alert must have a case where it fires and one where it does not, so an alert
// added without tests fails here. promtool comes with Debian's prometheus package
// (deploy/scripts/ensure-prometheus.sh installs it before the suite); without it this test fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { MONITORING, alerts, rule } from "../harness/monitoring-kit.ts";

const RULES_FILE = "alerts.rules.yaml";
const TESTS_FILE = "alerts.test.yaml";

// The PrometheusRule as the kustomization renders it; its groups are plain Prometheus rule groups.
const groups = rule.spec.groups;
const alertNames: string[] = alerts.map((a) => a.alert);
const ruleTests = parse(readFileSync(join(MONITORING, TESTS_FILE), "utf8"));

const promtool = Bun.which("promtool");
let dir: string | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "alert-rules-"));
  writeFileSync(join(dir, RULES_FILE), stringify({ groups }));
  copyFileSync(join(MONITORING, TESTS_FILE), join(dir, TESTS_FILE));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(...args: string[]): { code: number; output: string } {
  if (!promtool) throw new Error("promtool is not installed: run `bash deploy/scripts/ensure-prometheus.sh` (Debian's prometheus package, as root) before the monitoring tests");
  const result = Bun.spawnSync([promtool, ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, output: `promtool ${args.join(" ")} (exit ${result.exitCode}):\n${result.stdout.toString()}${result.stderr.toString()}` };
}

describe("the alert rules under promtool", () => {
  test("promtool is installed", () => {
    expect(promtool, "promtool is not installed: run `bash deploy/scripts/ensure-prometheus.sh` (Debian's prometheus package, as root)").toBeTruthy();
  });

  test("alerts.test.yaml runs against the rule file written here", () => {
    expect(ruleTests.rule_files).toEqual([RULES_FILE]);
  });

  test("promtool check rules accepts the PrometheusRule's groups", () => {
    const { code, output } = run("check", "rules", RULES_FILE);
    expect(code, output).toBe(0);
  });

  test("promtool test rules passes alerts.test.yaml", () => {
    const { code, output } = run("test", "rules", TESTS_FILE);
    expect(code, output).toBe(0);
  });
});

describe("alerts.test.yaml covers every alert", () => {
  const cases: { alertname: string; exp_alerts?: unknown[] }[] = ruleTests.tests.flatMap((t: { alert_rule_test?: unknown[] }) => t.alert_rule_test ?? []);

  test("the PrometheusRule has alerts, and the test cases name only them", () => {
    expect(alertNames.length).toBeGreaterThan(0);
    const unknown = [...new Set(cases.map((c) => c.alertname))].filter((name) => !alertNames.includes(name));
    expect(unknown).toEqual([]);
  });

  test("each alert fires in some case (a non-empty exp_alerts)", () => {
    const firing = new Set(cases.filter((c) => (c.exp_alerts ?? []).length > 0).map((c) => c.alertname));
    expect(alertNames.filter((name) => !firing.has(name))).toEqual([]);
  });

  test("each alert stays quiet in some case (an empty exp_alerts)", () => {
    const quiet = new Set(cases.filter((c) => (c.exp_alerts ?? []).length === 0).map((c) => c.alertname));
    expect(alertNames.filter((name) => !quiet.has(name))).toEqual([]);
  });
});
