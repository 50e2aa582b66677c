// A plan's articles_in_flight (how many of an account's articles the generation runner keeps in
// flight at once) through the operator CLI, and QuotaService.GetGenerationShare, which the runner
// asks for an account's cap, through a real client against the running stack.
import { beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { runAdmin } from "../harness/admin-cli.ts";
import { quotaClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { operatorClient } from "../harness/tenants.ts";
import { fieldErrorsOf } from "../../services/kit/src/errors.ts";

let stack: TestStack;

beforeAll(async () => {
  stack = await useStack();
});

const admin = (...args: string[]) => runAdmin(stack, ...args);

const PLAN_FLAGS = ["--monthly-words", "50000", "--per-minute", "60", "--per-hour", "1000", "--per-day", "10000"];

async function createPlan(...extra: string[]) {
  const created = await admin("plan", "create", "--name", "Fair", ...PLAN_FLAGS, ...extra);
  expect(created.stderr).toBe("");
  expect(created.code).toBe(0);
  return created.json as Record<string, unknown> & { id: number };
}

async function createAccount(planId?: number): Promise<bigint> {
  const created = await admin("account", "create", "--name", "Fair account", ...(planId === undefined ? [] : ["--plan", String(planId)]));
  expect(created.code).toBe(0);
  return BigInt(created.json.id);
}

async function errorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}

describe("plan create and update --articles-in-flight", () => {
  test("create sets it; the output shows it beside the plan's other fields", async () => {
    const plan = await createPlan("--articles-in-flight", "25");
    expect(plan).toEqual({
      id: expect.any(Number),
      name: "Fair",
      monthly_words: 50_000,
      requests_per_minute: 60,
      requests_per_hour: 1_000,
      requests_per_day: 10_000,
      articles_in_flight: 25,
    });
  }, 30_000);

  test("without it the plan has none (null: the runner's default)", async () => {
    const plan = await createPlan();
    expect(plan.articles_in_flight).toBeNull();
    expect(plan.monthly_words).toBe(50_000);
  }, 30_000);

  test("the bounds 1 and 100,000 are accepted", async () => {
    expect((await createPlan("--articles-in-flight", "1")).articles_in_flight).toBe(1);
    expect((await createPlan("--articles-in-flight", "100000")).articles_in_flight).toBe(100_000);
  }, 30_000);

  test("update sets, keeps and removes it", async () => {
    const plan = await createPlan();
    const set = await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "40");
    expect(set.code).toBe(0);
    expect(set.json).toMatchObject({ id: plan.id, articles_in_flight: 40, monthly_words: 50_000 });

    // Changing another field leaves it as it is.
    const other = await admin("plan", "update", "--plan", String(plan.id), "--per-minute", "120");
    expect(other.code).toBe(0);
    expect(other.json).toMatchObject({ requests_per_minute: 120, articles_in_flight: 40 });

    const removed = await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "none");
    expect(removed.code).toBe(0);
    expect(removed.json).toMatchObject({ id: plan.id, requests_per_minute: 120, articles_in_flight: null });

    // An update that changes nothing answers the plan as it is.
    const unchanged = await admin("plan", "update", "--plan", String(plan.id));
    expect(unchanged.code).toBe(0);
    expect(unchanged.json).toMatchObject({ id: plan.id, articles_in_flight: null });
  }, 30_000);

  test("values out of range are refused by the service on field articles_in_flight, exit 1", async () => {
    for (const value of ["0", "100001"]) {
      const created = await admin("plan", "create", "--name", "Bad", ...PLAN_FLAGS, "--articles-in-flight", value);
      expect(created.code).toBe(1);
      expect(created.stdout).toBe("");
      const error = JSON.parse(created.stderr);
      expect(error).toMatchObject({ code: Code.InvalidArgument, errors: { articles_in_flight: ["articles_in_flight must be a whole number from 1 to 100,000."] } });
    }
    const plan = await createPlan("--articles-in-flight", "7");
    const updated = await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "0");
    expect(updated.code).toBe(1);
    expect(JSON.parse(updated.stderr)).toMatchObject({ code: Code.InvalidArgument, errors: { articles_in_flight: [expect.stringContaining("1 to 100,000")] } });
    // Nothing changed.
    const now = await admin("plan", "update", "--plan", String(plan.id));
    expect(now.json.articles_in_flight).toBe(7);
  }, 30_000);

  test("what is no whole number is a usage error, exit 2", async () => {
    for (const value of ["abc", "-3", "2.5", "none", "99999999999"]) {
      const created = await admin("plan", "create", "--name", "Bad", ...PLAN_FLAGS, "--articles-in-flight", value);
      expect(created.code).toBe(2);
      expect(created.stdout).toBe("");
      expect(created.stderr).toContain(`--articles-in-flight must be a whole number from 1 to 100,000, got "${value}"`);
      expect(created.stderr).toContain("usage: npm run admin -- plan create");
    }
    const plan = await createPlan();
    const updated = await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "many");
    expect(updated.code).toBe(2);
    expect(updated.stderr).toContain(`--articles-in-flight must be a whole number from 1 to 100,000 or "none", got "many"`);
  }, 30_000);

  test("UpdatePlan refuses a value together with clear_articles_in_flight", async () => {
    const plan = await createPlan("--articles-in-flight", "5");
    const error = await errorOf(operatorClient(stack).updatePlan({ planId: BigInt(plan.id), articlesInFlight: 6, clearArticlesInFlight: true }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(error))).toEqual(["articles_in_flight"]);
    const { plan: cleared } = await operatorClient(stack).updatePlan({ planId: BigInt(plan.id), clearArticlesInFlight: true });
    expect(cleared!.articlesInFlight).toBeUndefined();
  }, 30_000);

  test("help lists the flag", async () => {
    const help = await admin("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("[--articles-in-flight N]");
    expect(help.stdout).toContain("[--articles-in-flight N|none]");
  }, 30_000);
});

describe("QuotaService.GetGenerationShare", () => {
  test("answers the articles_in_flight of the account's plan, and follows changes to it", async () => {
    const plan = await createPlan("--articles-in-flight", "12");
    const accountId = await createAccount(plan.id);
    const quota = quotaClient(stack, "generation-runner");
    expect((await quota.getGenerationShare({ accountId })).articlesInFlight).toBe(12);

    expect((await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "3")).code).toBe(0);
    expect((await quota.getGenerationShare({ accountId })).articlesInFlight).toBe(3);

    expect((await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "none")).code).toBe(0);
    expect((await quota.getGenerationShare({ accountId })).articlesInFlight).toBeUndefined();
  }, 30_000);

  test("follows the account's subscription", async () => {
    const capped = await createPlan("--articles-in-flight", "9");
    const uncapped = await createPlan();
    const accountId = await createAccount(uncapped.id);
    const quota = quotaClient(stack, "generation-runner");
    expect((await quota.getGenerationShare({ accountId })).articlesInFlight).toBeUndefined();

    expect((await admin("account", "subscribe", "--account", String(accountId), "--plan", String(capped.id))).code).toBe(0);
    expect((await quota.getGenerationShare({ accountId })).articlesInFlight).toBe(9);

    // No active subscription: unset, as for a plan without a cap.
    expect((await admin("account", "unsubscribe", "--account", String(accountId))).code).toBe(0);
    expect((await quota.getGenerationShare({ accountId })).articlesInFlight).toBeUndefined();
  }, 30_000);

  test("an account that never had a plan answers unset", async () => {
    const accountId = await createAccount();
    const answer = await quotaClient(stack, "generation-runner").getGenerationShare({ accountId });
    expect(answer.articlesInFlight).toBeUndefined();
  }, 30_000);

  test("NOT_FOUND for an unknown account", async () => {
    const error = await errorOf(quotaClient(stack, "generation-runner").getGenerationShare({ accountId: 9_000_000_000_000n }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe("No such account.");
  }, 30_000);
});
