// The usage report's schema (GET /v1/usage), apart from the article and workflow schemas.
import { Type, type Static } from "@sinclair/typebox";
import type { UsageOperations } from "../usage/usage-operations.ts";

const Words = (description: string) => Type.Integer({ minimum: 0, description });
const Cost = (description: string) => Type.String({ pattern: "^[0-9]+\\.[0-9]{2,}$", description: `${description} USD as a decimal string.`, examples: ["0.0123"] });

const UsageBucket = Type.Object(
  {
    start: Type.String({ format: "date-time", description: "The bucket's start: a day at 00:00 UTC, or an hour." }),
    words: Words("settled_words plus reserved_words."),
    settled_words: Words("Words of the bucket's settled reservations (articles completed)."),
    reserved_words: Words("Words still reserved by the bucket's articles in progress."),
    cost: Cost("What the bucket's completed articles cost, as each article's cost says."),
    by_project: Type.Array(Type.Object({ project_id: Type.Union([Type.Integer(), Type.Null()], { description: "null: not attributed (reserved before the report existed)." }), words: Words("Settled and reserved."), cost: Cost("Of its completed articles.") })),
    by_key: Type.Array(Type.Object({ key_id: Type.Union([Type.Integer(), Type.Null()], { description: "null: made without a key (the dashboard, a granted workload) or not attributed." }), words: Words("Settled and reserved."), cost: Cost("Of its completed articles.") })),
  },
  { description: "Words of one day or hour: the ledger's reservations taken in it (released ones count nowhere)." },
);

export const UsageReport = Type.Object(
  {
    account_id: Type.Integer({ description: "The key's account." }),
    period: Type.String({ pattern: "^[0-9]{4}-[0-9]{2}$", description: "The calendar month (UTC) reported, YYYY-MM." }),
    monthly_words: Words("The plan's allowance for the month."),
    settled_words: Words("Words of completed articles this month."),
    reserved_words: Words("Words held by articles in progress."),
    remaining_words: Words("monthly_words minus settled and reserved words, never below 0: what a new article can still reserve."),
    days: Type.Array(UsageBucket, { description: "The month's days with words, oldest first." }),
    hours: Type.Array(UsageBucket, { description: "The hours of the last 48 hours with words, oldest first." }),
    rate_limits: Type.Array(
      Type.Object({
        bucket: Type.String({ description: "The endpoints sharing the limit: articles, workflows (with publishing destinations), usage." }),
        windows: Type.Array(
          Type.Object({
            window_seconds: Type.Integer({ description: "60, 3600 or 86400." }),
            limit: Type.Integer(),
            used: Type.Integer({ description: "Requests counted in the window now (may read slightly high until the next request drops buckets leaving it)." }),
            remaining: Type.Integer(),
          }),
        ),
      }),
    ),
  },
  { description: "The account's usage this month, from the word quota ledger." },
);

// Compile-time drift check: the operation's output is a value of the schema.
type Fits<A extends B, B> = A;
export type UsageSchemaCheck = Fits<Awaited<ReturnType<UsageOperations["report"]>>, Static<typeof UsageReport>>;
