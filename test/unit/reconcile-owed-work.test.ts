// The reconciler's settings and what it owes a stale unfinished article: a running one its
// generation job (a finished job counts as lost), a completed one without its originality check
// the run's hand-offs, a completed one with a webhook_url and no delivery on record its webhook.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadReconcileSettings } from "../../services/kit/src/config.ts";
import { owedJob, type UnfinishedArticle } from "../../services/article-store/src/domain/unfinished-work.ts";

const article = (overrides: Partial<UnfinishedArticle> = {}): UnfinishedArticle => ({
  id: 1,
  externalId: "2f1c7a8e-0c4b-4d0a-9a53-0b6f1e6b8a11",
  accountId: 1,
  status: "writing",
  webhookUrl: null,
  currentVersionId: null,
  originalityChecked: false,
  deliveryFailed: false,
  stale: true,
  deliveryRecorded: false,
  ...overrides,
});

describe("reconcile settings", () => {
  test("defaults: a sweep a minute, articles unchanged for five minutes", () => {
    expect(loadReconcileSettings({})).toEqual({ intervalMs: 60_000, staleAfterMs: 300_000 });
  });

  test("both are read", () => {
    expect(loadReconcileSettings({ RECONCILE_INTERVAL_MS: "1000", RECONCILE_STALE_AFTER_MS: "3000" })).toEqual({ intervalMs: 1000, staleAfterMs: 3000 });
  });

  test.each([
    ["RECONCILE_INTERVAL_MS", "0"],
    ["RECONCILE_INTERVAL_MS", "soon"],
    ["RECONCILE_STALE_AFTER_MS", "10"],
    ["RECONCILE_STALE_AFTER_MS", "-5"],
  ])("%s=%s is refused naming the variable", (variable, value) => {
    expect(() => loadReconcileSettings({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadReconcileSettings({ [variable]: value })).toThrow(variable);
  });
});

describe("owed work", () => {
  test("nothing is owed to an article changed within the bound", () => {
    for (const status of ["queued", "batching", "writing", "polishing", "completed"] as const) expect(owedJob(article({ status, stale: false }))).toBeUndefined();
  });

  test("a running article is owed its generation job, a finished one counting as lost", () => {
    for (const status of ["queued", "batching", "writing", "polishing"] as const) expect(owedJob(article({ status }))).toEqual({ queue: "generation", finishedIsLost: true });
  });

  test("a completed article without its originality check is owed the run's hand-offs", () => {
    expect(owedJob(article({ status: "completed", currentVersionId: 7, webhookUrl: "https://example.com/hook" }))).toEqual({ queue: "generation", finishedIsLost: false });
  });

  test("a completed article with a webhook_url and no delivery on record is owed its webhook, for its current version", () => {
    expect(owedJob(article({ status: "completed", originalityChecked: true, currentVersionId: 7, webhookUrl: "https://example.com/hook" }))).toEqual({ queue: "webhooks", versionId: 7 });
  });

  test("a delivery on record, a delivery given up, or no webhook_url owes nothing", () => {
    const done = { status: "completed" as const, originalityChecked: true, currentVersionId: 7, webhookUrl: "https://example.com/hook" };
    expect(owedJob(article({ ...done, deliveryRecorded: true }))).toBeUndefined();
    expect(owedJob(article({ ...done, deliveryFailed: true }))).toBeUndefined();
    expect(owedJob(article({ ...done, webhookUrl: null }))).toBeUndefined();
  });

  test("a published article whose current version (an edit) is unchecked is owed its check, and nothing more", () => {
    expect(owedJob(article({ status: "published", currentVersionId: 8, webhookUrl: "https://example.com/hook" }))).toEqual({ queue: "generation", finishedIsLost: false });
  });

  test("checked published articles and failed articles are owed nothing", () => {
    expect(owedJob(article({ status: "published", originalityChecked: true, currentVersionId: 7, webhookUrl: "https://example.com/hook" }))).toBeUndefined();
    expect(owedJob(article({ status: "failed" }))).toBeUndefined();
  });
});
