// A team workload's grant is the boundary of what it reaches: acting for a user who belongs to two
// accounts, a workload granted only one resolves projects of that one alone. The other account's
// articles, workflows and destinations answer NOT_FOUND exactly as an unknown record does (even
// where the user could only view, so no PERMISSION_DENIED confirms them), lists hold none of them,
// and nothing is created, reserved, cancelled or published there. A grant naming both accounts
// with different roles bounds each method by the accounts whose role allows it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { startOwnGateway, type OwnGateway } from "../harness/own-gateway.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { footprint, grpcAnswers, grpcNotFound, grpcOutcome, grpcRequests, listedIds, userOnTwoAccounts, type TwoAccounts } from "./reach-support.ts";

let stack: TestStack;
let t: TwoAccounts;
let gateway: OwnGateway;
let clients: PublicClients;

beforeAll(async () => {
  stack = await useStack();
  t = await userOnTwoAccounts(stack);
  const [home, away] = [t.home.accountId, t.away.accountId];
  gateway = await startOwnGateway(stack, {
    PUBLIC_GRPC_WORKLOADS: `team/home=${home}:writer,publisher; team/split=${home}:reader; team/split=${away}:writer; team/all=*:writer`,
  });
  clients = publicClients(gateway.grpcPort);
}, 60_000);

afterAll(async () => {
  closeClients(clients);
  await gateway?.stop();
});

async function acting(workload: string, accountId: number, userId: number) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${await stack.identity.mint(workload)}`);
  metadata.set("x-account-id", String(accountId));
  metadata.set("x-user-id", String(userId));
  return metadata;
}

describe("a workload granted one account, acting for a user of two", () => {
  test("every request naming the other account's records answers NOT_FOUND, and nothing changes there", async () => {
    const requests = grpcRequests(t.awayRecords);
    const before = await footprint(stack, t.awayRecords, [t.home.accountId, t.away.accountId]);
    for (const userId of [t.userId, t.viewerId]) {
      expect(await grpcAnswers(clients, () => acting("team/home", t.home.accountId, userId), requests)).toEqual(grpcNotFound(requests));
    }
    expect(await footprint(stack, t.awayRecords, [t.home.accountId, t.away.accountId])).toEqual(before);
  }, 60_000);

  test("lists hold only the granted account's articles", async () => {
    const metadata = await acting("team/home", t.home.accountId, t.userId);
    const all = await grpcOutcome(clients, "ArticleService", "ListArticles", {}, metadata);
    expect(all.code).toBe("OK");
    expect(listedIds(all.reply)).not.toContain(t.awayRecords.article.external_id);
    // The other account's project by id lists nothing of it.
    const one = await grpcOutcome(clients, "ArticleService", "ListArticles", { project_id: String(t.away.projectId) }, await acting("team/home", t.home.accountId, t.userId));
    expect(one.code === "NOT_FOUND" || (one.code === "OK" && listedIds(one.reply).length === 0)).toBe(true);
  });

  test("the granted account itself is reached as before", async () => {
    const listed = await grpcOutcome(clients, "WorkflowService", "ListWorkflows", { project_id: String(t.home.projectId) }, await acting("team/home", t.home.accountId, t.userId));
    expect(listed.code).toBe("OK");
  });
});

describe("a grant's accounts by method", () => {
  test("a workload writing for one account and reading another creates only where it writes", async () => {
    const requests = grpcRequests(t.awayRecords).filter(([, , method]) => method === "CreateArticle" || method === "CancelArticle");
    const homeProject = (r: object) => JSON.parse(JSON.stringify(r).replaceAll(`"${t.away.projectId}"`, `"${t.home.projectId}"`));
    const before = await footprint(stack, t.awayRecords, [t.home.accountId, t.away.accountId]);
    // Acting for away (writer there): home's project is outside what CreateArticle is granted for.
    const intoHome = await grpcOutcome(clients, "ArticleService", "CreateArticle", homeProject(requests[requests.length - 1][3]), await acting("team/split", t.away.accountId, t.userId));
    expect(`${intoHome.code} ${intoHome.details}`).toBe("NOT_FOUND Project not found.");
    // Reading home is granted: its workflows answer.
    expect((await grpcOutcome(clients, "WorkflowService", "ListWorkflows", { project_id: String(t.home.projectId) }, await acting("team/split", t.home.accountId, t.userId))).code).toBe("OK");
    expect(await footprint(stack, t.awayRecords, [t.home.accountId, t.away.accountId])).toEqual(before);
  });

  test("a workload granted every account reaches what the user reaches", async () => {
    const read = await grpcOutcome(clients, "ArticleService", "GetArticle", { id: t.awayRecords.article.external_id }, await acting("team/all", t.home.accountId, t.userId));
    expect(read.code).toBe("OK");
    expect(read.reply.article.external_id).toBe(t.awayRecords.article.external_id);
  });
});
