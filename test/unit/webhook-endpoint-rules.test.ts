// The rules of webhook endpoints that need no stack: what an endpoint may store (one message per
// field), which article ends become events (a client's cancel does not), the events' ids (one per
// version, one per failure, one per account, month and threshold) and the body endpoints receive.
import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ArticleSchema } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { checkedEndpointFields } from "../../services/webhook-dispatcher/src/domain/endpoints.ts";
import { eventBody } from "../../services/webhook-dispatcher/src/domain/endpoint-deliveries.ts";
import { articleEndEvent } from "../../services/article-store/src/endpoint-event-handover.ts";
import { quotaLowEvent } from "../../services/accounts-billing/src/domain/quota-alerts.ts";
import { DomainError } from "../../services/kit/src/errors.ts";
import { CANCELLED_REASON } from "../../services/kit/src/article-events.ts";

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error.fields;
    throw error;
  }
  throw new Error("not refused");
};

describe("endpoint fields", () => {
  test("a creation needs an http(s) url and at least one known event; every wrong field is named at once", () => {
    expect(checkedEndpointFields({ url: " https://hooks.example.com/a ", events: ["quota.low", "quota.low"] }, true)).toEqual({ url: "https://hooks.example.com/a", events: ["quota.low"] });
    expect(Object.keys(refusal(() => checkedEndpointFields({ url: "ftp://x", events: ["article.exploded"], description: "d".repeat(201) }, true))).sort()).toEqual(["description", "events", "url"]);
    expect(Object.keys(refusal(() => checkedEndpointFields({}, true))).sort()).toEqual(["events", "url"]);
  });

  test("an update checks only what it names", () => {
    expect(checkedEndpointFields({ enabled: false }, false)).toEqual({ enabled: false });
    expect(Object.keys(refusal(() => checkedEndpointFields({ events: [] }, false)))).toEqual(["events"]);
  });
});

describe("article events", () => {
  const at = new Date("2026-12-05T10:00:00Z");
  const article = (fields: Record<string, unknown>) =>
    create(ArticleSchema, { id: 7n, externalId: "0b6e1a52-3f5d-4c59-9a4f-6d1f0c2f1a11", projectId: 3n, accountId: 2n, cost: "0.01", updatedAt: timestampFromDate(at), ...fields });

  test("completed and published are one event per version; a failure one per time it failed", () => {
    const completed = articleEndEvent(article({ status: "completed", currentVersionId: 11n }))!;
    expect(completed).toMatchObject({ type: "article.completed", eventId: "evt_article.completed_0b6e1a52-3f5d-4c59-9a4f-6d1f0c2f1a11_11", projectId: 3, accountId: 2 });
    expect(completed.data).toMatchObject({ id: 7, external_id: "0b6e1a52-3f5d-4c59-9a4f-6d1f0c2f1a11", project_id: 3, current_version_id: 11 });
    expect(articleEndEvent(article({ status: "published", currentVersionId: 12n, publishedVersionId: 12n }))!.eventId).toEndWith("_12");
    expect(articleEndEvent(article({ status: "failed", failureReason: "upstream model error" }))!.eventId).toEndWith(`_${at.getTime()}`);
  });

  test("a cancel, and an article still running, make no event", () => {
    expect(articleEndEvent(article({ status: "failed", failureReason: CANCELLED_REASON }))).toBeUndefined();
    expect(articleEndEvent(article({ status: "writing" }))).toBeUndefined();
  });
});

test("quota.low is one event per account, month and threshold, for the account's endpoints", () => {
  const event = quotaLowEvent({ accountId: 2, period: "2026-12", thresholdPercent: 95, monthlyWords: 1000, takenWords: 960, createdAt: new Date("2026-12-05T10:00:00Z"), handedOverAt: null });
  expect(event).toEqual({
    eventId: "evt_quota.low_2_2026-12_95",
    type: "quota.low",
    occurredAt: "2026-12-05T10:00:00.000Z",
    accountId: 2,
    data: { account_id: 2, period: "2026-12", threshold_percent: 95, monthly_words: 1000, words_taken: 960, words_remaining: 40 },
  });
  expect(JSON.parse(eventBody(event))).toEqual({ type: "quota.low", timestamp: "2026-12-05T10:00:00.000Z", data: event.data });
});
