import { expect, test } from "bun:test";
import { DeadlineExceeded, settledWithin, within } from "../../services/kit/src/deadline.ts";

const never = new Promise<never>(() => {});

test("within answers with the work's answer, or its failure, when it comes in time", async () => {
  expect(await within(Promise.resolve(7), 50)).toBe(7);
  await expect(within(Promise.reject(new Error("refused")), 50)).rejects.toThrow("refused");
});

test("within rejects with DeadlineExceeded, or the caller's error, once the time has passed", async () => {
  const started = Date.now();
  const late = await within(never, 30).catch((error) => error);
  expect(late).toBeInstanceOf(DeadlineExceeded);
  expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  await expect(within(never, 10, () => new Error("the site hung"))).rejects.toThrow("the site hung");
});

test("settledWithin says whether the work settled in time, a failure counting as settled", async () => {
  expect(await settledWithin(Promise.resolve(), 50)).toBe(true);
  expect(await settledWithin(Promise.reject(new Error("closed badly")), 50)).toBe(true);
  expect(await settledWithin(never, 10)).toBe(false);
});

test("a late failure of the work is dropped, not left unhandled", async () => {
  let fail!: (error: Error) => void;
  const work = new Promise<never>((_, reject) => (fail = reject));
  await expect(within(work, 10)).rejects.toBeInstanceOf(DeadlineExceeded);
  fail(new Error("too late"));
  await new Promise(setImmediate);
});
