// Tables of the accounts-billing context, in its own Postgres schema.
import { sql, type AnyColumn } from "drizzle-orm";
import { bigint, bigserial, boolean, index, integer, numeric, pgSchema, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

export const accountsBilling = pgSchema("accounts_billing");

const id = () => bigserial("id", { mode: "number" }).primaryKey();
const ref = (name: string) => bigint(name, { mode: "number" });
const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();

export const plans = accountsBilling.table("plans", {
  id: id(),
  name: text("name").notNull(),
  monthlyWords: bigint("monthly_words", { mode: "number" }).notNull(),
  requestsPerMinute: integer("requests_per_minute").notNull(),
  requestsPerHour: integer("requests_per_hour").notNull(),
  requestsPerDay: integer("requests_per_day").notNull(),
  /** Explicit cap on an account's articles in flight at once in the generation runner; null: none (no cap of its own). */
  articlesInFlight: integer("articles_in_flight"),
  /** The account's weight in the runners' fair shares between accounts with work waiting, 1 to 100. */
  shareWeight: integer("share_weight").notNull().default(1),
  // The plan's own caps on what a tenant may hold (domain/plan-caps.ts); null: the deployment's
  // default (CAP_* settings), so changing a default reaches every plan that sets none.
  stepsPerWorkflow: integer("steps_per_workflow"),
  promptCharacters: integer("prompt_characters"),
  workflowsPerProject: integer("workflows_per_project"),
  destinationsPerProject: integer("destinations_per_project"),
  openEventStreams: integer("open_event_streams"),
  createdAt: createdAt(),
});

export const accounts = accountsBilling.table("accounts", {
  id: id(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

/** One row per subscription period; the active one has no end. */
export const subscriptions = accountsBilling.table(
  "subscriptions",
  {
    id: id(),
    accountId: ref("account_id").notNull().references(() => accounts.id),
    planId: ref("plan_id").notNull().references(() => plans.id),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("subscriptions_one_active").on(t.accountId).where(sql`${t.endedAt} is null`)],
);

export const users = accountsBilling.table("users", {
  id: id(),
  name: text("name").notNull(),
  email: text("email").notNull().unique(),
  emailVerifiedAt: timestamp("email_verified_at", { withTimezone: true }),
  currentAccountId: ref("current_account_id"),
  currentProjectId: ref("current_project_id"),
  disabledAt: timestamp("disabled_at", { withTimezone: true }),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
  /** argon2id (Bun.password's encoded form); null until the user sets one through a one-time link. */
  passwordHash: text("password_hash"),
});

export const memberships = accountsBilling.table(
  "memberships",
  {
    accountId: ref("account_id").notNull().references(() => accounts.id),
    userId: ref("user_id").notNull().references(() => users.id),
    role: text("role", { enum: ["owner", "admin", "editor", "viewer"] }).notNull(),
    /** When set, the member reaches only these projects of the account. */
    projectIds: bigint("project_ids", { mode: "number" }).array(),
    /** Projects on which the member has view access only, whatever the role grants elsewhere. */
    viewOnlyProjectIds: bigint("view_only_project_ids", { mode: "number" }).array(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] }), index("memberships_user").on(t.userId)],
);

export const projects = accountsBilling.table(
  "projects",
  {
    id: id(),
    accountId: ref("account_id").notNull().references(() => accounts.id),
    name: text("name").notNull(),
    defaultAudience: text("default_audience"),
    createdAt: createdAt(),
  },
  (t) => [index("projects_account").on(t.accountId)],
);

/** Only a SHA-256 of the token is kept; the token itself is shown once at creation. */
export const apiKeys = accountsBilling.table("api_keys", {
  id: id(),
  accountId: ref("account_id").notNull().references(() => accounts.id),
  userId: ref("user_id").notNull().references(() => users.id),
  tokenHash: text("token_hash").notNull().unique(),
  prefix: text("prefix").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true }),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
  createdAt: createdAt(),
  // The key's scope (KeyScope): each narrows what the user's memberships reach; false and null narrow nothing.
  scopeAccountOnly: boolean("scope_account_only").notNull().default(false),
  scopeProjectIds: bigint("scope_project_ids", { mode: "number" }).array(),
  scopeReadOnly: boolean("scope_read_only").notNull().default(false),
  /** The name its creator gave it in the dashboard ("" for keys made before names, or by the operator without one). */
  name: text("name").notNull().default(""),
  /** When a request last used it, written at most once a minute per key. */
  lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
});

/** Dashboard sessions: only a SHA-256 of the token is kept; the token lives in the browser's HttpOnly cookie. */
export const sessions = accountsBilling.table(
  "sessions",
  {
    id: id(),
    userId: ref("user_id").notNull().references(() => users.id),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: createdAt(),
    /** Last activity, to the minute: the idle limit runs from here. */
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull().defaultNow(),
    /** The absolute limit, whatever the activity. */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [index("sessions_user").on(t.userId)],
);

/** One-time links to set a password (a new user's, an invited member's): a SHA-256 of the token only. */
export const passwordLinks = accountsBilling.table(
  "password_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: ref("user_id").notNull().references(() => users.id),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
  },
  (t) => [index("password_links_user").on(t.userId)],
);

/**
 * Mail waiting to go, or sent: the outbox that accounts-billing's mail sender works through, so a
 * request never waits on the SMTP server and a failed send is tried again. A row names what to
 * say and to whom, never a link's token: the sender makes the link when it sends (so no token is
 * ever stored in plain text).
 */
export const mailOutbox = accountsBilling.table(
  "mail_outbox",
  {
    id: id(),
    kind: text("kind", { enum: ["invitation", "password_reset", "sign_up"] }).notNull(),
    userId: ref("user_id").notNull().references(() => users.id),
    /** The account an invitation or a sign-up is for. */
    accountId: ref("account_id").references(() => accounts.id),
    /** Who invited (invitations). */
    actorUserId: ref("actor_user_id").references(() => users.id),
    createdAt: createdAt(),
    /** Attempts begun so far. */
    attempts: integer("attempts").notNull().default(0),
    /** When the next attempt is due; while one is under way, when it is taken as lost. */
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp("sent_at", { withTimezone: true }),
    /** Set when no more attempts are made: they are spent, or the mail is no longer needed (last_error says which). */
    failedAt: timestamp("failed_at", { withTimezone: true }),
    /** The last failure's reason (the SMTP server's answer), for the operator. */
    lastError: text("last_error"),
  },
  (t) => [index("mail_outbox_due").on(t.nextAttemptAt).where(sql`${t.sentAt} is null and ${t.failedAt} is null`)],
);

/** Who changed what of an account's keys and members, when (owners and admins read it). */
export const auditEvents = accountsBilling.table(
  "audit_events",
  {
    id: id(),
    accountId: ref("account_id").notNull().references(() => accounts.id),
    actorUserId: ref("actor_user_id").notNull().references(() => users.id),
    action: text("action").notNull(),
    subject: text("subject").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("audit_events_account").on(t.accountId, t.id)],
);

/**
 * Where a reservation's words went (project, key) and what its article cost, for the usage report:
 * written with the reservation when the caller says, and the cost with its settlement.
 */
export const reservationOrigins = accountsBilling.table("reservation_origins", {
  reference: text("reference").primaryKey(),
  projectId: ref("project_id"),
  keyId: ref("key_id"),
  /** USD, exact to the pico-dollar as the runner prices calls (kit/src/rules/usd.ts). */
  costUsd: numeric("cost_usd", { precision: 24, scale: 12 }),
});

/** The word quota ledger: one row per article reservation, settled or released later. */
export const wordReservations = accountsBilling.table(
  "word_reservations",
  {
    reference: text("reference").primaryKey(),
    accountId: ref("account_id").notNull().references(() => accounts.id),
    period: text("period").notNull(),
    words: bigint("words", { mode: "number" }).notNull(),
    state: text("state", { enum: ["reserved", "settled", "released"] }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("word_reservations_account_period").on(t.accountId, t.period),
    // The held reservations alone (ListHeldReservations: the reconciler's walk for reservations
    // whose creation died half-way), in reference order with the time they were taken, so the walk
    // reads a page from the index without visiting settled and released rows, however many there
    // are. Settling and releasing change `state`, which this predicate reads, so they are no longer
    // HOT updates: one index entry more per completion, the price of a sweep that stays small.
    index("word_reservations_held").on(t.reference, t.updatedAt).where(held(t)),
  ],
);

/**
 * Reservations still held: neither settled nor released. Queries repeat this predicate word for
 * word (a literal, not a bound value) so the planner matches word_reservations_held.
 */
export function held(t: { state: AnyColumn }) {
  return sql`${t.state} = 'reserved'`;
}

/**
 * Words taken per account and month (settled and reserved), kept so a reservation reads one row
 * instead of summing the month's reservations, whose number grows with every article. Triggers
 * on word_reservations append each change to word_usage_changes in the writing transaction;
 * folding moves them here about once a second (migration 0003). Appending, rather than updating
 * this row, keeps settlements (which do not take the account's lock) from queueing behind the
 * reservations of the same account until their commits.
 */
export const wordUsage = accountsBilling.table(
  "word_usage",
  {
    accountId: ref("account_id").notNull(),
    period: text("period").notNull(),
    settledWords: bigint("settled_words", { mode: "number" }).notNull(),
    reservedWords: bigint("reserved_words", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.period] })],
);

/** Changes to word_usage written with the reservations they count, not yet folded into it. */
export const wordUsageChanges = accountsBilling.table(
  "word_usage_changes",
  {
    id: id(),
    accountId: ref("account_id").notNull(),
    period: text("period").notNull(),
    settledChange: bigint("settled_change", { mode: "number" }).notNull(),
    reservedChange: bigint("reserved_change", { mode: "number" }).notNull(),
  },
  (t) => [index("word_usage_changes_account_period").on(t.accountId, t.period)],
);

/**
 * The quota.low alerts: one row per account, period and threshold (80, 95 percent of the month's
 * words), so each fires once a period whichever replica sees the crossing first; the row is the
 * outbox of its event until handed over to webhook-dispatcher's endpoint-events queue.
 */
export const quotaAlerts = accountsBilling.table(
  "quota_alerts",
  {
    accountId: ref("account_id").notNull(),
    period: text("period").notNull(),
    thresholdPercent: integer("threshold_percent").notNull(),
    monthlyWords: ref("monthly_words").notNull(),
    /** Settled and reserved words when the crossing was seen. */
    takenWords: ref("taken_words").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    handedOverAt: timestamp("handed_over_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.period, t.thresholdPercent] }), index("quota_alerts_waiting").on(t.createdAt).where(sql`${t.handedOverAt} is null`)],
);
