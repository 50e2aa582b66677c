// Every Connect and gRPC listener bounds a request before its caller is known: a compressed body
// that would inflate past the limit is refused with RESOURCE_EXHAUSTED while it inflates, and the
// process under attack barely grows (its VmRSS read from /proc). The internal contracts still
// carry the largest message the spec allows: a page of 100 articles of 10,000 words.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import { readFileSync } from "node:fs";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { lifecycleClient, storeClient } from "../harness/service-clients.ts";
import { holdGeneration, type GenerationHold } from "./articles-fixtures.ts";

const MIB = 1024 * 1024;
// 64 MiB of zeros: 106 bytes of brotli, about 65 KB of gzip.
const inflated = new Uint8Array(64 * MIB);
const bombs = { br: brotliCompressSync(inflated), gzip: gzipSync(inflated) };

let stack: TestStack;
let tenant: Tenant;
let hold: GenerationHold;

beforeAll(async () => {
  stack = await useStack();
  // The articles below are completed by hand, as generation would: no runner takes them.
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
});

afterAll(async () => {
  await hold.release();
});

/** The resident memory of a process of the stack, in bytes. */
function rssOf(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
  return Number(kib) * 1024;
}

/** One gRPC call with a compressed message and no credential; its grpc-status and grpc-message. */
function sendCompressed(address: string, path: string, encoding: "br" | "gzip", payload: Uint8Array): Promise<{ status: string; message: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(address);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", "grpc-encoding": encoding });
    const head = Buffer.alloc(5);
    head.writeUInt8(1, 0);
    head.writeUInt32BE(payload.byteLength, 1);
    let status = "";
    let message = "";
    const take = (headers: http2.IncomingHttpHeaders) => {
      if (headers["grpc-status"] !== undefined) [status, message] = [String(headers["grpc-status"]), decodeURIComponent(String(headers["grpc-message"] ?? ""))];
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => {});
    stream.on("end", () => {
      session.close();
      resolve({ status, message });
    });
    stream.on("error", reject);
    stream.end(Buffer.concat([head, payload]));
  });
}

describe("a compressed request that inflates to 64 MiB, sent with no credential", () => {
  const targets = [
    ["the gateway's public gRPC port", "gateway", () => stack.publicGrpcUrl, "/articles.api.v1.ArticleService/GetArticle"],
    ["article-store's gRPC port", "articleStore", () => stack.grpcUrls.articleStore, "/articles.article_store.v1.ArticleStoreService/GetArticle"],
  ] as const;
  for (const [label, process, address, path] of targets) {
    for (const encoding of ["br", "gzip"] as const) {
      test(`${label}: ${encoding} is RESOURCE_EXHAUSTED, the process grows by less than 16 MiB`, async () => {
        const pid = stack.processes.get(process)!.pid;
        // One first, not counted: what the process sets up once (the decoder's code, its first
        // buffers) is not what a request holds.
        await sendCompressed(address(), path, encoding, bombs[encoding]);
        const before = rssOf(pid);
        const answers = [];
        // Several in a row: one that held the whole message would show at once.
        for (let i = 0; i < 4; i++) answers.push(await sendCompressed(address(), path, encoding, bombs[encoding]));
        const grown = rssOf(pid) - before;
        for (const answer of answers) {
          expect(answer.status).toBe("8");
          expect(answer.message).toContain("after decompression");
        }
        console.log(`${label} ${encoding} (${bombs[encoding].byteLength} bytes): VmRSS grew ${(grown / MIB).toFixed(1)} MiB`);
        expect(grown).toBeLessThan(16 * MIB);
      }, 30_000);
    }
  }

  test("a service's Connect listener refuses a body declared past its limit without reading it, and takes no compression", async () => {
    const url = `${stack.env.ACCOUNTS_BILLING_URL}/grpc.health.v1.Health/Check`;
    const tooLong = await fetch(url, { method: "POST", headers: { "content-type": "application/proto" }, body: new Uint8Array(MIB + 1) });
    expect(tooLong.status).toBe(429);
    expect((await tooLong.json()).code).toBe("resource_exhausted");
    const compressed = await fetch(url, { method: "POST", headers: { "content-type": "application/proto", "content-encoding": "gzip" }, body: gzipSync(new Uint8Array(16)) });
    expect((await compressed.json()).code).toBe("unimplemented");
  });
});

describe("the largest message the spec allows", () => {
  test("a page of 100 articles of 10,000 words, content and original content, passes on article-store's contract", async () => {
    // 10,000 words of 15 characters and a space: 160,000 bytes a version; the humanized one differs.
    const words = (letter: string) => Array.from({ length: 10_000 }, (_, i) => `${letter}${String(i).padStart(14, "w")}`).join(" ");
    const first = words("a");
    const second = words("b");
    // additional_context at its 25,000 characters, of three bytes each.
    const context = "€".repeat(25_000);
    const store = storeClient(stack);
    const lifecycle = lifecycleClient(stack);
    const projectId = BigInt(tenant.projectId);
    for (let i = 0; i < 100; i++) {
      const externalId = crypto.randomUUID();
      await store.createArticle({ article: { externalId, projectId, accountId: BigInt(tenant.accountId), title: `Largest ${i}`, articleType: "blog_post", targetWordCount: 10_000, tone: "friendly", pointOfView: "third_person", language: "en", cost: "0", additionalContext: context, humanize: true, settings: { model: "simulator:sim-fast" } } });
      await lifecycle.completeGeneration({ externalId, content: first, actualWordCount: 10_000, aiModelUsed: "simulator:sim-fast", cost: "0.01", moreVersionsFollow: true });
      await lifecycle.addVersion({ externalId, kind: "humanized", content: second, actualWordCount: 10_000, cost: "0.02" });
    }
    const page = await store.listArticles({ projectIds: [projectId], perPage: 100, page: 1 });
    expect(page.articles).toHaveLength(100);
    for (const article of page.articles) {
      expect(article.content).toBe(second);
      expect(article.originalContent).toBe(first);
      expect(article.additionalContext).toBe(context);
    }
    const bytes = page.articles.reduce((sum, a) => sum + Buffer.byteLength(a.content!) + Buffer.byteLength(a.originalContent!) + Buffer.byteLength(a.additionalContext!), 0);
    console.log(`a page of 100 articles carried ${(bytes / MIB).toFixed(1)} MiB of text`);
    expect(bytes).toBeGreaterThan(30 * MIB);
  }, 120_000);
});
