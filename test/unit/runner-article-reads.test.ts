// The runner's reads of the article each run starts with: reads asked in the same turn share one
// BatchGetArticlesByExternalId, each gets its own article (undefined for one the store does not
// know), and a failed call fails the reads that shared it, not later ones.
import { expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { ArticleSchema, type ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { articleReader } from "../../services/generation-runner/src/domain/article-reads.ts";

const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

function store(known: number[]) {
  const calls: string[][] = [];
  let failNext = false;
  const client = {
    async batchGetArticlesByExternalId({ externalIds }: { externalIds: string[] }) {
      calls.push(externalIds);
      await Bun.sleep(5);
      if (failNext) {
        failNext = false;
        throw new Error("article-store is unavailable");
      }
      // In no particular order, as the method promises.
      return { articles: known.filter((n) => externalIds.includes(ID(n))).reverse().map((n) => create(ArticleSchema, { id: BigInt(n), externalId: ID(n), title: `Article ${n}` })) };
    },
  } as unknown as Client<typeof ArticleStoreService>;
  return { client, calls, failNextCall: () => (failNext = true) };
}

test("reads asked together share one call and each gets its own article", async () => {
  const { client, calls } = store([1, 2, 3]);
  const read = articleReader(client);
  const found = await Promise.all([read(ID(3)), read(ID(1)), read(ID(9)), read(ID(2))]);
  expect(found.map((a) => a?.title)).toEqual(["Article 3", "Article 1", undefined, "Article 2"]);
  expect(calls).toHaveLength(1);
});

test("a failed call fails the reads that shared it; the next read is asked afresh", async () => {
  const { client, calls, failNextCall } = store([1, 2]);
  const read = articleReader(client);
  failNextCall();
  const answers = await Promise.allSettled([read(ID(1)), read(ID(2))]);
  expect(answers.map((a) => a.status)).toEqual(["rejected", "rejected"]);
  expect((await read(ID(2)))?.title).toBe("Article 2");
  expect(calls).toHaveLength(2);
});
