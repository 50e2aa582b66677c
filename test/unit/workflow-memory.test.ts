// The gateway's memory of which revision a project's article type resolves to, as two gateways of
// one deployment hold it: a change made through one is followed at once by that one and as soon as
// its announcement arrives by the other; a lookup under way when a change happens is not kept;
// refusals are not kept; another project's entries stay; nothing is kept while not listening.
// Runs against the machine's Redis on a prefix of its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { PinnedWorkflowSchema, type PinnedWorkflow } from "../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { WorkflowMemory } from "../../gateway/src/workflows/workflow-memory.ts";
import { createLogger } from "../../services/kit/src/logger.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `workflow-memory-test-${randomBytes(3).toString("hex")}`;
const connections: IORedis[] = [];
let a: WorkflowMemory;
let b: WorkflowMemory;

/** The catalog as the memories see it: the current revision of each (project, type), counting lookups. */
const revisions = new Map<string, number>();
let lookups = 0;
const lookupOf = (projectId: bigint, articleType: string, delayMs = 0) => async (): Promise<PinnedWorkflow> => {
  lookups++;
  const revision = revisions.get(`${projectId} ${articleType}`);
  await Bun.sleep(delayMs);
  if (revision === undefined) throw new Error(`no ${articleType} in project ${projectId}`);
  return create(PinnedWorkflowSchema, { workflowId: 1n, revision, articleType });
};
const resolve = (memory: WorkflowMemory, projectId: bigint, articleType: string, delayMs = 0) => memory.resolve(projectId, articleType, lookupOf(projectId, articleType, delayMs));

async function until(condition: () => boolean | Promise<boolean>, what: string) {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

function gateway(): WorkflowMemory {
  const redis = new IORedis(REDIS_URL);
  const subscriber = new IORedis(REDIS_URL);
  connections.push(redis, subscriber);
  return new WorkflowMemory(redis, subscriber, prefix, createLogger("test"));
}

beforeAll(async () => {
  a = gateway();
  b = gateway();
  await until(() => a.listening && b.listening, "both memories listening");
});

afterAll(() => connections.forEach((c) => c.disconnect()));

describe("which revision an article type resolves to", () => {
  test("is remembered per project and type", async () => {
    revisions.set("1 guide", 1).set("2 guide", 7);
    const before = lookups;
    expect((await resolve(a, 1n, "guide")).revision).toBe(1);
    expect((await resolve(a, 1n, "guide")).revision).toBe(1);
    expect((await resolve(a, 2n, "guide")).revision).toBe(7);
    expect(lookups - before).toBe(2);
  });

  test("a change is followed at once by the gateway that made it and, once announced, by the others; other projects stay", async () => {
    revisions.set("1 guide", 1).set("2 guide", 7);
    await resolve(a, 1n, "guide");
    await resolve(b, 1n, "guide");
    await resolve(b, 2n, "guide");
    await a.changing(1n, async () => void revisions.set("1 guide", 2));
    expect((await resolve(a, 1n, "guide")).revision).toBe(2);
    await until(async () => (await resolve(b, 1n, "guide")).revision === 2, "the other gateway to follow the change");
    const before = lookups;
    expect((await resolve(b, 2n, "guide")).revision).toBe(7);
    expect(lookups).toBe(before);
  });

  test("a change whose call failed is announced too (it may have been made)", async () => {
    revisions.set("3 guide", 1);
    await resolve(a, 3n, "guide");
    const failed = a.changing(3n, async () => {
      revisions.set("3 guide", 2);
      throw new Error("the answer was lost");
    });
    expect(failed).rejects.toThrow("the answer was lost");
    await failed.catch(() => {});
    expect((await resolve(a, 3n, "guide")).revision).toBe(2);
  });

  test("a lookup under way when a change is made is answered but not remembered", async () => {
    revisions.set("4 guide", 1);
    const slow = resolve(a, 4n, "guide", 100);
    await Bun.sleep(20);
    await a.changing(4n, async () => void revisions.set("4 guide", 2));
    expect((await slow).revision).toBe(1);
    expect((await resolve(a, 4n, "guide")).revision).toBe(2);
  });

  test("a refusal is never remembered", async () => {
    revisions.delete("5 guide");
    expect(resolve(a, 5n, "guide")).rejects.toThrow("no guide in project 5");
    revisions.set("5 guide", 1);
    expect((await resolve(a, 5n, "guide")).revision).toBe(1);
  });

  test("nothing is remembered while the gateway is not listening", async () => {
    const redis = new IORedis(REDIS_URL);
    const subscriber = new IORedis(REDIS_URL, { lazyConnect: true });
    connections.push(redis, subscriber);
    const deaf = new WorkflowMemory(redis, subscriber, prefix, createLogger("test"));
    revisions.set("6 guide", 1);
    const before = lookups;
    await resolve(deaf, 6n, "guide");
    await resolve(deaf, 6n, "guide");
    expect(lookups - before).toBe(2);
    expect(deaf.listening).toBe(false);
  });
});

describe("a project's list pages", () => {
  /** The page as the memories see it: the project's current revision of "guide", counting reads. */
  let reads = 0;
  const pageOf = (memory: WorkflowMemory, projectId: bigint, query: string) =>
    memory.page(projectId, query, async () => {
      reads++;
      return { query, revision: revisions.get(`${projectId} guide`) };
    });

  test("are remembered per project and query, beside the types' revisions", async () => {
    revisions.set("7 guide", 1).set("8 guide", 4);
    const before = reads;
    expect(await pageOf(a, 7n, "1")).toEqual({ query: "1", revision: 1 });
    expect(await pageOf(a, 7n, "1")).toEqual({ query: "1", revision: 1 });
    expect(await pageOf(a, 7n, "2")).toEqual({ query: "2", revision: 1 });
    expect(await pageOf(a, 8n, "1")).toEqual({ query: "1", revision: 4 });
    expect(reads - before).toBe(3);
    expect((await resolve(a, 7n, "guide")).revision).toBe(1);
  });

  test("a change is followed at once by the gateway that made it and, once announced, by the others", async () => {
    revisions.set("9 guide", 1);
    await pageOf(a, 9n, "1");
    await pageOf(b, 9n, "1");
    await a.changing(9n, async () => void revisions.set("9 guide", 2));
    expect((await pageOf(a, 9n, "1")).revision).toBe(2);
    await until(async () => (await pageOf(b, 9n, "1")).revision === 2, "the other gateway to follow the change");
  });

  test("a read under way when a change is made is answered but not remembered", async () => {
    revisions.set("10 guide", 1);
    const slow = a.page(10n, "1", async () => {
      await Bun.sleep(100);
      return { revision: 1 };
    });
    await Bun.sleep(20);
    await a.changing(10n, async () => void revisions.set("10 guide", 2));
    expect((await slow).revision).toBe(1);
    expect((await pageOf(a, 10n, "1")).revision).toBe(2);
  });
});
