// A plan's articles_in_flight (an explicit cap on an account's articles the generation runner
// keeps in flight at once) and share_weight (the account's weight in the runners' fair shares)
// through the operator CLI, and QuotaService.GetGenerationShare, which the runner asks for an
// account's cap and weight, through a real client against the running stack; then the cap as the
// runner enforces it, seen through the API: articles beyond it wait queued, then run.
import { beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { runAdmin } from "../harness/admin-cli.ts";
import { quotaClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient } from "../harness/tenants.ts";
import { apiClient } from "../harness/http.ts";
import { articleBody, createWorkflow, marker } from "./generation-support.ts";
import { createArticles } from "./provider-support.ts";
import { fieldErrorsOf } from "../../services/kit/src/errors.ts";
import IORedis from "ioredis";
import { lineWeightsKey } from "../../services/kit/src/plan-weights.ts";

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

/** GetGenerationShare's answer as the runner reads it: the cap (undefined when none) and the weight. */
async function shareOf(accountId: bigint) {
  const { articlesInFlight, shareWeight } = await quotaClient(stack, "generation-runner").getGenerationShare({ accountId });
  return { articlesInFlight, shareWeight };
}

async function errorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}

/** What createPlan's plans show besides articles_in_flight and share_weight. */
const FAIR_PLAN = { id: expect.any(Number), name: "Fair", monthly_words: 50_000, requests_per_minute: 60, requests_per_hour: 1_000, requests_per_day: 10_000 };
// The tenant caps a plan prints last: the deployment's defaults, none of its own.
const DEFAULT_CAPS = {
  caps: { steps_per_workflow: 25, prompt_characters: 20_000, workflows_per_project: 50, destinations_per_project: 10, open_event_streams: 20 },
  own_caps: {},
};

// The plan's two bounded numbers are checked alike: the service refuses a value out of range on
// its field, the CLI what is no whole number.
const BOUNDED = [
  { flag: "--articles-in-flight", field: "articles_in_flight", max: 100_000, range: "1 to 100,000" },
  { flag: "--share-weight", field: "share_weight", max: 100, range: "1 to 100" },
] as const;

for (const { flag, field, max, range } of BOUNDED) {
  describe(`plan create and update ${flag}: its range`, () => {
    test(`the bounds 1 and ${max} are accepted`, async () => {
      expect((await createPlan(flag, "1"))[field]).toBe(1);
      expect((await createPlan(flag, String(max)))[field]).toBe(max);
    }, 30_000);

    test(`values out of range are refused by the service on field ${field}, exit 1`, async () => {
      const refusal = { code: Code.InvalidArgument, errors: { [field]: [`${field} must be a whole number from ${range}.`] } };
      for (const value of ["0", String(max + 1)]) {
        const created = await admin("plan", "create", "--name", "Bad", ...PLAN_FLAGS, flag, value);
        expect(created.code).toBe(1);
        expect(created.stdout).toBe("");
        expect(JSON.parse(created.stderr)).toMatchObject(refusal);
      }
      const plan = await createPlan(flag, "7");
      const updated = await admin("plan", "update", "--plan", String(plan.id), flag, "0");
      expect(updated.code).toBe(1);
      expect(JSON.parse(updated.stderr)).toMatchObject(refusal);
      // Nothing changed.
      const now = await admin("plan", "update", "--plan", String(plan.id));
      expect(now.json[field]).toBe(7);
    }, 30_000);

    test("what is no whole number is a usage error, exit 2", async () => {
      for (const value of ["abc", "-3", "2.5", "none", "99999999999"]) {
        const created = await admin("plan", "create", "--name", "Bad", ...PLAN_FLAGS, flag, value);
        expect(created.code).toBe(2);
        expect(created.stdout).toBe("");
        expect(created.stderr).toContain(`${flag} must be a whole number from ${range}, got "${value}"`);
        expect(created.stderr).toContain("usage: npm run admin -- plan create");
      }
    }, 30_000);
  });
}

describe("plan create and update --articles-in-flight", () => {
  test("create sets it; the output shows it beside the plan's other fields", async () => {
    expect(await createPlan("--articles-in-flight", "25")).toEqual({ ...FAIR_PLAN, articles_in_flight: 25, share_weight: 1, ...DEFAULT_CAPS });
  }, 30_000);

  test("without it the plan has none (null: no cap of its own)", async () => {
    const plan = await createPlan();
    expect(plan.articles_in_flight).toBeNull();
    expect(plan.monthly_words).toBe(50_000);
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

  test("on update, what is neither a whole number nor none is a usage error, exit 2", async () => {
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
});

describe("plan create and update --share-weight", () => {
  test("create sets it; the output shows it beside articles_in_flight", async () => {
    const plan = await createPlan("--share-weight", "3");
    expect(plan).toEqual({ ...FAIR_PLAN, articles_in_flight: null, share_weight: 3, ...DEFAULT_CAPS });
    expect(Object.keys(plan).slice(-4)).toEqual(["articles_in_flight", "share_weight", "caps", "own_caps"]);
  }, 30_000);

  test("without it the weight is 1", async () => {
    expect(await createPlan("--articles-in-flight", "4")).toMatchObject({ articles_in_flight: 4, share_weight: 1 });
  }, 30_000);

  test("update sets and keeps it", async () => {
    const plan = await createPlan();
    const set = await admin("plan", "update", "--plan", String(plan.id), "--share-weight", "5");
    expect(set.code).toBe(0);
    expect(set.json).toMatchObject({ id: plan.id, share_weight: 5, articles_in_flight: null, monthly_words: 50_000 });

    // Changing other fields, articles_in_flight among them, leaves it as it is.
    const other = await admin("plan", "update", "--plan", String(plan.id), "--per-minute", "120", "--articles-in-flight", "8");
    expect(other.code).toBe(0);
    expect(other.json).toMatchObject({ requests_per_minute: 120, articles_in_flight: 8, share_weight: 5 });
    const removed = await admin("plan", "update", "--plan", String(plan.id), "--articles-in-flight", "none");
    expect(removed.json).toMatchObject({ articles_in_flight: null, share_weight: 5 });

    const unchanged = await admin("plan", "update", "--plan", String(plan.id));
    expect(unchanged.code).toBe(0);
    expect(unchanged.json).toMatchObject({ id: plan.id, share_weight: 5 });
  }, 30_000);

  test("accounts-billing writes an account's weight for the runners' turns as its plan changes: on creation, update, subscribe and unsubscribe", async () => {
    const redis = new IORedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    try {
      const weightOf = (account: bigint) => redis.hget(lineWeightsKey(stack.redisPrefix, false), String(account));
      const plan = await createPlan("--share-weight", "7");
      // Before its first article: its first turns already go at its plan's weight.
      const account = await createAccount(plan.id);
      expect(await weightOf(account)).toBe("7");
      expect((await admin("plan", "update", "--plan", String(plan.id), "--share-weight", "2")).code).toBe(0);
      expect(await weightOf(account)).toBe("2");
      const other = await createPlan("--share-weight", "9");
      expect((await admin("account", "subscribe", "--account", String(account), "--plan", String(other.id))).code).toBe(0);
      expect(await weightOf(account)).toBe("9");
      expect((await admin("account", "unsubscribe", "--account", String(account))).code).toBe(0);
      expect(await weightOf(account)).toBe("1");
    } finally {
      redis.disconnect();
    }
  }, 30_000);

  test("none is no weight: a usage error on update too, exit 2", async () => {
    const plan = await createPlan();
    const updated = await admin("plan", "update", "--plan", String(plan.id), "--share-weight", "none");
    expect(updated.code).toBe(2);
    expect(updated.stderr).toContain(`--share-weight must be a whole number from 1 to 100, got "none"`);
  }, 30_000);

  test("CreatePlan and UpdatePlan name share_weight alone in their field errors", async () => {
    const operator = operatorClient(stack);
    const refusal = { share_weight: ["share_weight must be a whole number from 1 to 100."] };
    const created = await errorOf(operator.createPlan({ name: "Bad", monthlyWords: 1n, requestsPerMinute: 1, requestsPerHour: 1, requestsPerDay: 1, shareWeight: 0 }));
    expect(created.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(created)).toEqual(refusal);
    const plan = await createPlan();
    const updated = await errorOf(operator.updatePlan({ planId: BigInt(plan.id), shareWeight: 101 }));
    expect(updated.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(updated)).toEqual(refusal);
    const { plan: changed } = await operator.updatePlan({ planId: BigInt(plan.id), shareWeight: 2 });
    expect(changed!.shareWeight).toBe(2);
  }, 30_000);
});

test("help lists both flags on both commands", async () => {
  const help = await admin("--help");
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("[--articles-in-flight N] [--share-weight N]");
  expect(help.stdout).toContain("[--articles-in-flight N|none] [--share-weight N]");
}, 30_000);

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

  test("answers the share_weight of the account's plan, and follows changes to it", async () => {
    const plan = await createPlan("--share-weight", "3");
    const accountId = await createAccount(plan.id);
    expect(await shareOf(accountId)).toEqual({ articlesInFlight: undefined, shareWeight: 3 });

    expect((await admin("plan", "update", "--plan", String(plan.id), "--share-weight", "100")).code).toBe(0);
    expect(await shareOf(accountId)).toEqual({ articlesInFlight: undefined, shareWeight: 100 });
  }, 30_000);

  test("share_weight follows the account's subscription, and is 1 without one", async () => {
    const heavy = await createPlan("--share-weight", "4", "--articles-in-flight", "6");
    const plain = await createPlan();
    const accountId = await createAccount(plain.id);
    expect(await shareOf(accountId)).toEqual({ articlesInFlight: undefined, shareWeight: 1 });

    expect((await admin("account", "subscribe", "--account", String(accountId), "--plan", String(heavy.id))).code).toBe(0);
    expect(await shareOf(accountId)).toEqual({ articlesInFlight: 6, shareWeight: 4 });

    expect((await admin("account", "unsubscribe", "--account", String(accountId))).code).toBe(0);
    expect(await shareOf(accountId)).toEqual({ articlesInFlight: undefined, shareWeight: 1 });
  }, 30_000);

  test("an account that never had a plan answers no cap and weight 1", async () => {
    expect(await shareOf(await createAccount())).toEqual({ articlesInFlight: undefined, shareWeight: 1 });
  }, 30_000);

  test("NOT_FOUND for an unknown account", async () => {
    const error = await errorOf(quotaClient(stack, "generation-runner").getGenerationShare({ accountId: 9_000_000_000_000n }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe("No such account.");
  }, 30_000);
});

describe("the generation runner enforces articles_in_flight", () => {
  test("with a cap of 2, five articles created at once run two at a time: the others wait queued, then run, and all complete", async () => {
    const CAP = 2;
    const ARTICLES = 5;
    const tenant = await createTenant(stack, { articlesInFlight: CAP });
    const api = apiClient(stack.baseUrl, tenant.token);
    // Each article's one step takes 1.5 s, so any article running beyond the cap is seen by the polls below.
    const type = marker("capped");
    await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: `[[sim:sleep=1500]][[sim:words=30]] capped ${type}` }]);
    await createArticles(api, ARTICLES, articleBody(tenant.projectId, { article_type: type }), ARTICLES);

    // Every 100 ms until all have ended: how many run (started, not ended) and how many wait queued.
    const seen: { running: number; queued: number }[] = [];
    const deadline = Date.now() + 60_000;
    for (;;) {
      const listed = (await api.get(`/v1/articles?project_id=${tenant.projectId}&per_page=50`)).body.data as { status: string }[];
      const count = (statuses: string[]) => listed.filter((a) => statuses.includes(a.status)).length;
      seen.push({ running: count(["batching", "writing", "polishing"]), queued: count(["queued"]) });
      if (count(["completed", "failed"]) === ARTICLES || Date.now() > deadline) break;
      await Bun.sleep(100);
    }
    const statuses = ((await api.get(`/v1/articles?project_id=${tenant.projectId}&per_page=50`)).body.data as { status: string }[]).map((a) => a.status);
    expect(statuses).toEqual(Array(ARTICLES).fill("completed"));
    // Never more than the cap at once; the cap reached while others waited their turn.
    expect(Math.max(...seen.map((s) => s.running))).toBe(CAP);
    expect(seen.some((s) => s.running === CAP && s.queued === ARTICLES - CAP)).toBe(true);
  }, 90_000);
});
