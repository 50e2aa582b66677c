// Operator commands of accounts-billing: plans, accounts, users, members, projects, keys.
import {
  AddMemberResponseSchema,
  CreateAccountResponseSchema,
  CreateApiKeyResponseSchema,
  CreatePlanResponseSchema,
  CreateProjectResponseSchema,
  CreateUserResponseSchema,
  DisableUserResponseSchema,
  ListApiKeysResponseSchema,
  RevokeApiKeyResponseSchema,
  Role,
  SubscribeResponseSchema,
  UnsubscribeResponseSchema,
  UpdatePlanResponseSchema,
} from "../../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { GetWordUsageResponseSchema } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { UsageError, bool, flag, id, idList, int, optionalFlag, required, requiredInt, switchFlag, timestamp, type Flags } from "../args.ts";
import { command, type AdminCommand } from "../command.ts";
import { asJson } from "../json-output.ts";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { envOptional } from "../../../services/kit/src/config.ts";
import { passwordLinkAddress } from "../../../services/kit/src/dashboard-links.ts";

/** The plan's bounded numbers, with their ranges as a usage error names them. */
const PLAN_RANGES = { "articles-in-flight": "a whole number from 1 to 100,000", "share-weight": "a whole number from 1 to 100" };
type PlanRangeFlag = keyof typeof PLAN_RANGES;

/** --articles-in-flight N or --share-weight N; "none" (where allowed) is null. accounts-billing checks the range; the CLI only refuses what is no number at all, or does not fit the field. */
function planNumber(flags: Flags<PlanRangeFlag>, name: PlanRangeFlag, noneAllowed = false): number | null | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (noneAllowed && value === "none") return null;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n <= 2_147_483_647)) throw new UsageError(`--${name} must be ${PLAN_RANGES[name]}${noneAllowed ? ' or "none"' : ""}, got "${value}"`);
  return n;
}

/**
 * The plan's caps on what a tenant may hold (services/kit/src/rules/tenant-caps.ts), one flag
 * each; unset, a plan follows the deployment's default (CAP_* of accounts-billing).
 */
const CAP_FLAGS = ["steps-per-workflow", "prompt-characters", "workflows-per-project", "destinations-per-project", "open-event-streams"] as const;
type CapFlag = (typeof CAP_FLAGS)[number];
const capFlags = (value: string) => CAP_FLAGS.map((name) => optionalFlag(name, value));

/**
 * The caps the flags set (the TenantCaps message), and on update those given as "default", which
 * go back to the deployment's default. accounts-billing checks the range.
 */
function capsOf(flags: Flags<CapFlag>, defaultAllowed = false): { caps: Record<string, number>; defaultCaps: string[] } {
  const caps: Record<string, number> = {};
  const defaultCaps: string[] = [];
  for (const name of CAP_FLAGS) {
    const value = flags[name];
    if (value === undefined) continue;
    if (defaultAllowed && value === "default") {
      defaultCaps.push(name.replaceAll("-", "_"));
      continue;
    }
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!(n <= 2_147_483_647)) throw new UsageError(`--${name} must be a whole number from 1 to 1,000,000${defaultAllowed ? ' or "default"' : ""}, got "${value}"`);
    caps[name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())] = n;
  }
  return { caps, defaultCaps };
}

/**
 * A plan as JSON: articles_in_flight (null when the plan sets none: the account has no cap of its
 * own) and share_weight, then its tenant caps, in force and its own.
 */
function planJson(plan: Record<string, any>) {
  const { articles_in_flight = null, share_weight, caps, own_caps = {}, ...rest } = plan;
  return { ...rest, articles_in_flight, share_weight, caps, own_caps };
}

/** The scope of `key create`, or undefined for a key narrowed by nothing. */
function keyScope(flags: Flags<"scope" | "projects" | "read-only">) {
  const scope = flags.scope;
  if (scope !== undefined && scope !== "account") throw new UsageError(`--scope must be "account", got "${scope}"`);
  const projectIds = idList(flags, "projects");
  const readOnly = bool(flags, "read-only") ?? false;
  if (scope === undefined && !projectIds.length && !readOnly) return undefined;
  return { accountOnly: scope === "account", projectIds, readOnly };
}

/** A key as JSON, its scope last: null for a key narrowed by nothing. */
const keyJson = ({ scope = null, ...key }: Record<string, any>) => ({ ...key, scope });

const ROLES: Record<string, Role> = { owner: Role.OWNER, admin: Role.ADMIN, editor: Role.EDITOR, viewer: Role.VIEWER };

export const accountCommands: AdminCommand[] = [
  command({
    name: "plan create",
    flags: [flag("name", "N"), flag("monthly-words", "W"), flag("per-minute", "M"), flag("per-hour", "H"), flag("per-day", "D"), optionalFlag("articles-in-flight", "N"), optionalFlag("share-weight", "N"), ...capFlags("N")],
    summary:
      "create a plan (word allowance, request caps; --articles-in-flight: an explicit cap on an account's articles generating at once, 1-100000, else none; --share-weight: its weight in the runners' fair shares, 1-100, default 1; " +
      "--steps-per-workflow, --prompt-characters, --workflows-per-project, --destinations-per-project, --open-event-streams: the plan's own caps, 1-1000000, else the deployment's defaults)",
    run: async (f, c) =>
      planJson(
        asJson(
          CreatePlanResponseSchema,
          await c.operator.createPlan({
            name: required(f, "name"),
            monthlyWords: BigInt(requiredInt(f, "monthly-words")),
            requestsPerMinute: requiredInt(f, "per-minute"),
            requestsPerHour: requiredInt(f, "per-hour"),
            requestsPerDay: requiredInt(f, "per-day"),
            articlesInFlight: planNumber(f, "articles-in-flight") ?? undefined,
            shareWeight: planNumber(f, "share-weight") ?? undefined,
            caps: capsOf(f).caps,
          }),
        ).plan,
      ),
  }),
  command({
    name: "plan update",
    flags: [flag("plan", "ID"), optionalFlag("name", "N"), optionalFlag("monthly-words", "W"), optionalFlag("per-minute", "M"), optionalFlag("per-hour", "H"), optionalFlag("per-day", "D"), optionalFlag("articles-in-flight", "N|none"), optionalFlag("share-weight", "N"), ...capFlags("N|default")],
    summary:
      "change a plan's allowance, caps or share weight (--articles-in-flight none removes that cap: accounts on the plan then have no cap of their own; " +
      "a tenant cap given as default, e.g. --steps-per-workflow default, follows the deployment's default again)",
    run: async (f, c) => {
      const words = int(f, "monthly-words");
      const { caps, defaultCaps } = capsOf(f, true);
      const inFlight = planNumber(f, "articles-in-flight", true);
      return planJson(
        asJson(
          UpdatePlanResponseSchema,
          await c.operator.updatePlan({
            planId: id(f, "plan"),
            name: f.name,
            monthlyWords: words === undefined ? undefined : BigInt(words),
            requestsPerMinute: int(f, "per-minute"),
            requestsPerHour: int(f, "per-hour"),
            requestsPerDay: int(f, "per-day"),
            articlesInFlight: inFlight ?? undefined,
            clearArticlesInFlight: inFlight === null,
            shareWeight: planNumber(f, "share-weight") ?? undefined,
            caps,
            defaultCaps,
          }),
        ).plan,
      );
    },
  }),
  command({
    name: "account create",
    flags: [flag("name", "N"), optionalFlag("plan", "ID")],
    summary: "create an account, subscribed to a plan when given",
    run: async (f, c) => {
      const plan = int(f, "plan");
      return asJson(CreateAccountResponseSchema, await c.operator.createAccount({ name: required(f, "name"), planId: plan === undefined ? undefined : BigInt(plan) })).account;
    },
  }),
  command({
    name: "account subscribe",
    flags: [flag("account", "ID"), flag("plan", "ID")],
    summary: "start or switch the account's subscription",
    run: async (f, c) => asJson(SubscribeResponseSchema, await c.operator.subscribe({ accountId: id(f, "account"), planId: id(f, "plan") })).account,
  }),
  command({
    name: "account unsubscribe",
    flags: [flag("account", "ID")],
    summary: "end the account's subscription (/v1 answers 402)",
    run: async (f, c) => asJson(UnsubscribeResponseSchema, await c.operator.unsubscribe({ accountId: id(f, "account") })).account,
  }),
  command({
    name: "account usage",
    flags: [flag("account", "ID")],
    summary: "words allowed, used and reserved this month",
    run: async (f, c) => asJson(GetWordUsageResponseSchema, await c.quota.getWordUsage({ accountId: id(f, "account") })),
  }),
  command({
    name: "user create",
    flags: [flag("name", "N"), flag("email", "E")],
    summary: "create a user",
    run: async (f, c) => asJson(CreateUserResponseSchema, await c.operator.createUser({ name: required(f, "name"), email: required(f, "email") })).user,
  }),
  command({
    name: "user disable",
    flags: [flag("user", "ID")],
    summary: "disable a user everywhere (403)",
    run: async (f, c) => asJson(DisableUserResponseSchema, await c.operator.disableUser({ userId: id(f, "user") })).user,
  }),
  command({
    name: "user link",
    flags: [flag("user", "ID"), optionalFlag("base-url", "URL")],
    summary:
      "print a one-time link (valid 72 hours, shown only this once) with which the user sets a password and signs in to the dashboard; " +
      "--base-url: the gateway's public address, else PUBLIC_BASE_URL, else http://127.0.0.1:8080",
    run: async (f, c) => {
      const base = (f["base-url"] ?? envOptional(process.env, "PUBLIC_BASE_URL") ?? "http://127.0.0.1:8080").replace(/\/$/, "");
      const link = await c.sessions.createPasswordLink({ userId: id(f, "user") });
      return { user_id: Number(id(f, "user")), link: passwordLinkAddress(base, link.linkToken), expires_at: link.expiresAt ? timestampDate(link.expiresAt).toISOString() : null };
    },
  }),
  command({
    name: "member add",
    flags: [flag("account", "ID"), flag("user", "ID"), flag("role", "owner|admin|editor|viewer"), optionalFlag("projects", "1,2")],
    summary: "add a member (or change a member's role and project limit)",
    run: async (f, c) => {
      const role = ROLES[required(f, "role")];
      if (role === undefined) throw new UsageError("--role must be owner, admin, editor or viewer");
      return asJson(AddMemberResponseSchema, await c.operator.addMember({ accountId: id(f, "account"), userId: id(f, "user"), role, projectIds: idList(f, "projects") })).membership;
    },
  }),
  command({
    name: "member remove",
    flags: [flag("account", "ID"), flag("user", "ID")],
    summary: "remove a member; their keys on the account stop working",
    run: async (f, c) => {
      await c.operator.removeMember({ accountId: id(f, "account"), userId: id(f, "user") });
      return { removed: true };
    },
  }),
  command({
    name: "project create",
    flags: [flag("account", "ID"), flag("name", "N"), optionalFlag("audience", "TEXT")],
    summary: "create a project with an optional default target audience",
    run: async (f, c) => asJson(CreateProjectResponseSchema, await c.operator.createProject({ accountId: id(f, "account"), name: required(f, "name"), defaultAudience: f.audience })).project,
  }),
  command({
    name: "key create",
    flags: [flag("account", "ID"), flag("user", "ID"), optionalFlag("expires-at", "ISO8601"), optionalFlag("scope", "account"), optionalFlag("projects", "1,2"), switchFlag("read-only")],
    summary:
      "create an API key; the token is printed only this once. Without a scope it reaches every project its user may view on every account they belong to; --scope account: only this account's, --projects: only these projects of it, --read-only: reads only (either or neither of the others)",
    run: async (f, c) => {
      const reply = asJson(CreateApiKeyResponseSchema, await c.operator.createApiKey({ accountId: id(f, "account"), userId: id(f, "user"), expiresAt: timestamp(f, "expires-at"), scope: keyScope(f) }));
      return { ...keyJson(reply.key), token: reply.token };
    },
  }),
  command({
    name: "key list",
    flags: [flag("account", "ID")],
    summary: "the account's API keys with their scopes, revoked and expired ones too (never a token)",
    run: async (f, c) => asJson(ListApiKeysResponseSchema, await c.operator.listApiKeys({ accountId: id(f, "account") })).keys.map(keyJson),
  }),
  command({
    name: "key revoke",
    flags: [flag("id", "ID")],
    summary: "revoke an API key",
    run: async (f, c) => keyJson(asJson(RevokeApiKeyResponseSchema, await c.operator.revokeApiKey({ keyId: id(f, "id") })).key),
  }),
  command({
    name: "demo",
    flags: [],
    summary: "an account on a plan, a user, a project and a key in one go",
    run: async (_f, c) => {
      const t = await c.operator.createDemoTenant({});
      return {
        account: { id: Number(t.account!.id) },
        user: { id: Number(t.user!.id) },
        project: { id: Number(t.project!.id) },
        key: { id: Number(t.key!.id) },
        plan: { id: Number(t.plan!.id) },
        token: t.token,
      };
    },
  }),
];
