// The gateway's memory of the model catalog's answers (gateway/src/articles/model-memory.ts), as
// a gateway holds it with a runner announcing changes on the machine's Redis (a prefix of its
// own): an answer is kept past half a second once every runner has read the catalog since the
// last change; a change heard is followed by the next creation, and answers for the half second
// after it are kept half a second only; a lookup under way when a change is heard is not kept;
// not listening, nothing is kept past half a second.
import { afterAll, beforeAll, expect, test } from "bun:test";
import IORedis from "ioredis";
import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { ModelSchema, type Model } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { ModelMemory } from "../../gateway/src/articles/model-memory.ts";
import { announceModelCatalogChange, CATALOG_ANSWER_AGE_MAX_MS } from "../../services/kit/src/model-catalog-changes.ts";
import { SHORT_MEMORY_MS } from "../../gateway/src/plugins/short-memory.ts";
import { createLogger } from "../../services/kit/src/logger.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `model-memory-test-${randomBytes(3).toString("hex")}`;
const connections: IORedis[] = [];
let publisher: IORedis;

/** The catalog as the runner answers it: whether each model is active, counting lookups. */
const active = new Map<string, boolean>();
let lookups = 0;
const lookupOf = (id: string, before?: Promise<void>) => async (): Promise<Model> => {
  lookups++;
  const answer = create(ModelSchema, { id, active: active.get(id) ?? false });
  await before;
  return answer;
};

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

async function listeningMemory(): Promise<ModelMemory> {
  const subscriber = new IORedis(REDIS_URL);
  connections.push(subscriber);
  const memory = new ModelMemory(subscriber, prefix, createLogger("test"));
  await until(() => memory.listening, "the memory listening");
  return memory;
}


beforeAll(() => {
  publisher = new IORedis(REDIS_URL);
  connections.push(publisher);
});

afterAll(() => connections.forEach((c) => c.disconnect()));

test("once settled, an answer is kept past half a second, until a change is heard; then the next lookup sees the change", async () => {
  const memory = await listeningMemory();
  active.set("m:kept", true);
  await until(() => memory.settledNow, "the memory settled");
  const before = lookups;
  expect((await memory.resolve("m:kept", lookupOf("m:kept"))).active).toBe(true);
  await Bun.sleep(SHORT_MEMORY_MS + 100);
  expect((await memory.resolve("m:kept", lookupOf("m:kept"))).active).toBe(true);
  expect(lookups - before).toBe(1);

  active.set("m:kept", false);
  await announceModelCatalogChange(publisher, prefix);
  await until(() => !memory.settledNow, "the change heard");
  expect((await memory.resolve("m:kept", lookupOf("m:kept"))).active).toBe(false);
  // Settled again half a second after the change.
  expect(CATALOG_ANSWER_AGE_MAX_MS).toBeLessThanOrEqual(SHORT_MEMORY_MS);
  await until(() => memory.settledNow, "the memory settled again");
});

test("for half a second after a change, answers are kept half a second only: a runner may still answer from before it", async () => {
  const memory = await listeningMemory();
  active.set("m:settling", true);
  await until(() => memory.settledNow, "the memory settled");
  await announceModelCatalogChange(publisher, prefix);
  await until(() => !memory.settledNow, "the change heard");
  const before = lookups;
  await memory.resolve("m:settling", lookupOf("m:settling"));
  await Bun.sleep(SHORT_MEMORY_MS + 50);
  await memory.resolve("m:settling", lookupOf("m:settling"));
  expect(lookups - before).toBe(2);
});

test("a lookup under way when a change is heard answers its caller and is not kept", async () => {
  const memory = await listeningMemory();
  active.set("m:overtaken", true);
  await until(() => memory.settledNow, "the memory settled");
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const before = lookups;
  const answering = memory.resolve("m:overtaken", lookupOf("m:overtaken", held));
  active.set("m:overtaken", false);
  await announceModelCatalogChange(publisher, prefix);
  await until(() => !memory.settledNow, "the change heard");
  release();
  // The caller gets what the runner answered, read before the change.
  expect((await answering).active).toBe(true);
  expect((await memory.resolve("m:overtaken", lookupOf("m:overtaken"))).active).toBe(false);
  expect(lookups - before).toBe(2);
});

test("while not listening, nothing is kept past half a second", async () => {
  const subscriber = new IORedis(REDIS_URL, { lazyConnect: true });
  connections.push(subscriber);
  const deaf = new ModelMemory(subscriber, prefix, createLogger("test"));
  expect(deaf.listening).toBe(false);
  expect(deaf.settledNow).toBe(false);
  active.set("m:deaf", true);
  const before = lookups;
  await deaf.resolve("m:deaf", lookupOf("m:deaf"));
  await deaf.resolve("m:deaf", lookupOf("m:deaf"));
  expect(lookups - before).toBe(1);
  await Bun.sleep(SHORT_MEMORY_MS + 50);
  await deaf.resolve("m:deaf", lookupOf("m:deaf"));
  expect(lookups - before).toBe(2);
});
