// webhook-dispatcher settings: the spec's defaults, the test stack's shortened schedule, and one
// clear error naming a bad variable.
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../services/kit/src/config.ts";
import { loadDispatcherSettings } from "../../services/webhook-dispatcher/src/config.ts";

import { randomBytes } from "node:crypto";

const key = { WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64") };

describe("dispatcher settings", () => {
  test("defaults: 3 attempts, 10 s / 20 s / 30 s, private addresses refused", () => {
    const settings = loadDispatcherSettings(key);
    expect(settings).toMatchObject({ attempts: 3, backoffMs: [10_000, 20_000, 30_000], allowPrivateUrls: false });
  });

  test("WEBHOOK_ATTEMPTS, WEBHOOK_BACKOFF_MS and ALLOW_PRIVATE_URLS are read", () => {
    const settings = loadDispatcherSettings({ WEBHOOK_ATTEMPTS: "5", WEBHOOK_BACKOFF_MS: "300, 600", ALLOW_PRIVATE_URLS: "true", ...key });
    expect(settings).toMatchObject({ attempts: 5, backoffMs: [300, 600], allowPrivateUrls: true });
  });

  test("publishing: 6 attempts, 30 s / 2 min / 10 min / 30 min, 20 at once by default; each read", () => {
    expect(loadDispatcherSettings(key)).toMatchObject({ publishAttempts: 6, publishBackoffMs: [30_000, 120_000, 600_000, 1_800_000], publishConcurrency: 20 });
    const set = loadDispatcherSettings({ ...key, PUBLISH_ATTEMPTS: "2", PUBLISH_BACKOFF_MS: "100", PUBLISH_CONCURRENCY: "3" });
    expect(set).toMatchObject({ publishAttempts: 2, publishBackoffMs: [100], publishConcurrency: 3 });
  });

  test.each([
    ["PUBLISH_ATTEMPTS", "0"],
    ["PUBLISH_BACKOFF_MS", "30s"],
    ["PUBLISH_CONCURRENCY", "lots"],
    ["WEBHOOK_ATTEMPTS", "0"],
    ["WEBHOOK_ATTEMPTS", "three"],
    ["WEBHOOK_BACKOFF_MS", "10s,20s"],
    ["ALLOW_PRIVATE_URLS", "maybe"],
    ["WEBHOOK_SECRET_KEY", "too-short"],
  ])("%s=%s is refused naming the variable", (variable, value) => {
    try {
      loadDispatcherSettings({ ...key, [variable]: value });
      throw new Error("expected a configuration error");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(variable);
    }
  });
});
