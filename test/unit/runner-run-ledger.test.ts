// The run ledger's joined writes (services/generation-runner/src/domain/checkpoints.ts) against a
// real Postgres with the runner's migrations: a run's opening records its first step's start, a
// later pickup records none, and a step's checkpoint records the next step's start, also when a
// racing worker stored the checkpoint first (that one wins).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { openServiceDatabase, type ServiceDatabase } from "../../services/kit/src/db.ts";
import { schema } from "../../services/generation-runner/src/db/client.ts";
import { openedNow, pickUpRun, saveStepCheckpoint } from "../../services/generation-runner/src/domain/checkpoints.ts";
import postgres from "postgres";

const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const databaseName = `articles_test_ledger_${randomBytes(3).toString("hex")}`;
const databaseUrl = Object.assign(new URL(ADMIN_DATABASE_URL), { pathname: `/${databaseName}` }).toString();
let database: ServiceDatabase<typeof schema>;

beforeAll(async () => {
  database = await openServiceDatabase({
    databaseUrl,
    schemaName: "generation_runner",
    schema,
    migrationsFolder: fileURLToPath(new URL("../../services/generation-runner/src/db/migrations", import.meta.url)),
    poolSize: 2,
  });
});

afterAll(async () => {
  await database.close();
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${databaseName}" with (force)`);
  await admin.end();
});

const pin = (externalId: string) => ({ externalId, workflowId: 1, workflowRevision: 1, articleType: "blog_post", requestedModel: "simulator:sim-fast" });
const attemptsOf = async (externalId: string) =>
  (await database.sql<{ step_number: number; attempts: number }[]>`select step_number, attempts from generation_runner.step_attempts where external_id = ${externalId} order by step_number`).map((r) => [r.step_number, r.attempts]);
const checkpoint = (stepNumber: number, output: string) => ({
  stepNumber,
  stepName: `Step ${stepNumber}`,
  model: "simulator:sim-fast",
  usedFallback: false,
  batched: false,
  promptTokens: 10,
  completionTokens: 20,
  cost: 1234n,
  output,
  waitedMs: 0,
});

test("opening a run records its first step's start; a later pickup is counted and records none", async () => {
  const first = await pickUpRun(database.db, pin("ledger-1"), { stepNumber: 1, stepName: "Outline" });
  expect(openedNow(first)).toBe(true);
  expect(await attemptsOf("ledger-1")).toEqual([[1, 1]]);

  const again = await pickUpRun(database.db, pin("ledger-1"), { stepNumber: 1, stepName: "Outline" });
  expect(openedNow(again)).toBe(false);
  expect(again.pickups).toBe(2);
  expect(await attemptsOf("ledger-1")).toEqual([[1, 1]]);
});

test("a step's checkpoint records the next step's start with it; the last one records none", async () => {
  await pickUpRun(database.db, pin("ledger-2"), { stepNumber: 1, stepName: "Step 1" });
  const saved = await saveStepCheckpoint(database.db, "ledger-2", checkpoint(1, "first"), { stepNumber: 2, stepName: "Step 2" });
  expect(saved).toMatchObject({ stepNumber: 1, output: "first", cost: 1234n });
  expect(saved.completedAt).toBeInstanceOf(Date);
  expect(await attemptsOf("ledger-2")).toEqual([[1, 1], [2, 1]]);

  await saveStepCheckpoint(database.db, "ledger-2", checkpoint(2, "second"));
  expect(await attemptsOf("ledger-2")).toEqual([[1, 1], [2, 1]]);
});

test("a checkpoint a racing worker stored first wins, and the next step's start still counts", async () => {
  await pickUpRun(database.db, pin("ledger-3"), { stepNumber: 1, stepName: "Step 1" });
  await saveStepCheckpoint(database.db, "ledger-3", checkpoint(1, "the racer's"), { stepNumber: 2, stepName: "Step 2" });
  const ours = await saveStepCheckpoint(database.db, "ledger-3", { ...checkpoint(1, "ours"), cost: 999n }, { stepNumber: 2, stepName: "Step 2" });
  expect(ours).toMatchObject({ output: "the racer's", cost: 1234n });
  expect(await attemptsOf("ledger-3")).toEqual([[1, 1], [2, 2]]);
});
