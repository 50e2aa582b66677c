// Which failed Redis commands mean "Redis is away for now" (the request answers 503 and may be
// retried) and which are a defect of the command (500): a cluster between masters answers
// CLUSTERDOWN or TRYAGAIN for a few seconds of a failover, and that is an outage, not a bug.
import { describe, expect, test } from "bun:test";
import { isRedisAway } from "../../services/kit/src/redis.ts";

const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

describe("isRedisAway", () => {
  test("no answer at all is away", () => {
    expect(isRedisAway(new Error("Connection is closed."))).toBe(true);
    expect(isRedisAway(Object.assign(new Error("Command timed out"), { name: "TimeoutError" }))).toBe(true);
  });

  test("a refusal that passes with a failover or a restart is away", () => {
    for (const message of ["CLUSTERDOWN The cluster is down", "TRYAGAIN Multiple keys request during rehashing of slot", "MASTERDOWN Link with MASTER is down", "READONLY You can't write against a read only replica.", "LOADING Redis is loading the dataset in memory", "BUSY Redis is busy running a script."]) {
      expect(isRedisAway(replyError(message))).toBe(true);
    }
  });

  test("any other refusal is the command's defect", () => {
    for (const message of ["ERR Error running script (call to f_1): wrong number of arguments", "WRONGTYPE Operation against a key holding the wrong kind of value", "NOSCRIPT No matching script."]) {
      expect(isRedisAway(replyError(message))).toBe(false);
    }
  });
});
