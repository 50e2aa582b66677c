// gRPC handlers of accounts-billing: thin translations between proto messages and the domain.
import type { ConnectRouter } from "@connectrpc/connect";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  AccessLevel,
  AccountsService,
  PlanSchema,
  ProjectSchema,
  UserSchema,
  type TenantCaps,
  type TenantCapsSchema,
} from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { ReservationErasureService } from "../../../proto/gen/articles/accounts_billing/v1/erasure_pb.ts";
import { eraseReservation } from "./domain/erased-reservations.ts";
import { ReservationRetryService } from "../../../proto/gen/articles/accounts_billing/v1/retries_pb.ts";
import { reserveAgain } from "./domain/reservation-retries.ts";
import { QuotaService, ReservationState, WordReservationSchema } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { ApiKeySchema, OperatorService, Role as ProtoRole } from "../../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { DomainError, invalidFields } from "../../kit/src/errors.ts";
import { quotaReservations } from "../../kit/src/metrics.ts";

// Reservations by outcome: taken, refused (quota or account), or failed (database).
const reservationsMade = quotaReservations.labels("reserved");
const reservationsRefused = quotaReservations.labels("refused");
const reservationsFailed = quotaReservations.labels("error");
import type { Db } from "./db/client.ts";
import * as identity from "./domain/identity.ts";
import * as quota from "./domain/word-quota.ts";
import { getGenerationShare } from "./domain/generation-share.ts";
import type { PlanWeightAnnouncer } from "./plan-weight-announcer.ts";
import type { Role } from "./domain/access.ts";
import { capsInForce, ownCapsOf, type OwnCaps } from "./domain/plan-caps.ts";
import { keyUseIsStale, noteKeyUse } from "./domain/tenant-admin.ts";
import { recordCost, recordOrigin, usageReport } from "./domain/usage-report.ts";
import { usageReportMessage } from "./usage-report-message.ts";
import { isTenantCapName, TENANT_CAPS, type TenantCapName, type TenantCapValues } from "../../kit/src/rules/tenant-caps.ts";


export const ts = (d: Date) => timestampFromDate(d);
export const tsOpt = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

export const userMessage = (u: identity.UserRow): MessageInitShape<typeof UserSchema> => ({
  id: BigInt(u.id),
  name: u.name,
  email: u.email,
  emailVerifiedAt: tsOpt(u.emailVerifiedAt),
  currentAccountId: u.currentAccountId === null ? undefined : BigInt(u.currentAccountId),
  currentProjectId: u.currentProjectId === null ? undefined : BigInt(u.currentProjectId),
  createdAt: ts(u.createdAt),
  updatedAt: ts(u.updatedAt),
  disabled: u.disabledAt !== null,
});

/** TenantCaps' field of each cap: steps_per_workflow → stepsPerWorkflow. */
const capField = (name: TenantCapName) => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()) as keyof Omit<TenantCaps, "$typeName" | "$unknown">;

const capsMessage = (caps: Partial<TenantCapValues>): MessageInitShape<typeof TenantCapsSchema> =>
  Object.fromEntries(Object.entries(caps).map(([name, value]) => [capField(name as TenantCapName), value]));

/** A plan's own caps from a request: the fields set in `caps`, and null for each of `defaultCaps`. */
function ownCapsOfRequest(caps: TenantCaps | undefined, defaultCaps: readonly string[] = []): OwnCaps {
  const own: OwnCaps = {};
  for (const name of TENANT_CAPS) if (caps?.[capField(name)] !== undefined) own[name] = caps[capField(name)];
  for (const name of defaultCaps) {
    if (!isTenantCapName(name)) throw invalidFields({ default_caps: [`default_caps names ${name}, which is not a cap: ${TENANT_CAPS.join(", ")}.`] });
    if (own[name] !== undefined) throw invalidFields({ [name]: [`Set ${name} or name it in default_caps, not both.`] });
    own[name] = null;
  }
  return own;
}

const planMessage = (p: identity.PlanRow, capDefaults: TenantCapValues): MessageInitShape<typeof PlanSchema> => ({
  id: BigInt(p.id),
  name: p.name,
  monthlyWords: BigInt(p.monthlyWords),
  requestsPerMinute: p.requestsPerMinute,
  requestsPerHour: p.requestsPerHour,
  requestsPerDay: p.requestsPerDay,
  articlesInFlight: p.articlesInFlight ?? undefined,
  shareWeight: p.shareWeight,
  caps: capsMessage(capsInForce(p, capDefaults)),
  ownCaps: capsMessage(ownCapsOf(p)),
});

const projectMessage = (p: identity.ProjectRow): MessageInitShape<typeof ProjectSchema> => ({
  id: BigInt(p.id),
  accountId: BigInt(p.accountId),
  name: p.name,
  defaultAudience: p.defaultAudience ?? undefined,
  createdAt: ts(p.createdAt),
});

const scopeMessage = (scope: identity.KeyScope | undefined) => scope && { ...scope, projectIds: scope.projectIds.map(BigInt) };

export const keyMessage = (k: identity.KeyRow): MessageInitShape<typeof ApiKeySchema> => ({
  id: BigInt(k.id),
  accountId: BigInt(k.accountId),
  userId: BigInt(k.userId),
  prefix: k.prefix,
  expiresAt: tsOpt(k.expiresAt),
  revokedAt: tsOpt(k.revokedAt),
  createdAt: ts(k.createdAt),
  scope: scopeMessage(identity.scopeOf(k)),
});

export const accountMessage = (a: { id: number; name: string; planId: number | null; createdAt: Date }) => ({
  id: BigInt(a.id),
  name: a.name,
  planId: a.planId === null ? undefined : BigInt(a.planId),
  createdAt: ts(a.createdAt),
});

const STATE: Record<quota.Reservation["state"], ReservationState> = {
  reserved: ReservationState.RESERVED,
  settled: ReservationState.SETTLED,
  released: ReservationState.RELEASED,
};

const reservationMessage = (r: quota.Reservation): MessageInitShape<typeof WordReservationSchema> => ({
  reference: r.reference,
  accountId: BigInt(r.accountId),
  words: BigInt(r.words),
  state: STATE[r.state],
  period: r.period,
});

const ROLE_OF_PROTO: Partial<Record<ProtoRole, Role>> = {
  [ProtoRole.OWNER]: "owner",
  [ProtoRole.ADMIN]: "admin",
  [ProtoRole.EDITOR]: "editor",
  [ProtoRole.VIEWER]: "viewer",
};

function levelOf(level: AccessLevel) {
  if (level === AccessLevel.VIEW) return "view" as const;
  if (level === AccessLevel.UPDATE) return "update" as const;
  throw invalidFields({ level: ["level must be VIEW or UPDATE."] });
}

/** UpdatePlan's articles_in_flight: a new value, null to remove it (clear_articles_in_flight), or undefined to leave it. */
function articlesInFlightChange(req: { articlesInFlight?: number; clearArticlesInFlight: boolean }): number | null | undefined {
  if (!req.clearArticlesInFlight) return req.articlesInFlight;
  if (req.articlesInFlight !== undefined) {
    throw invalidFields({ articles_in_flight: ["Set articles_in_flight or clear_articles_in_flight, not both."] });
  }
  return null;
}

export function roleOf(role: ProtoRole): Role {
  const r = ROLE_OF_PROTO[role];
  if (!r) throw invalidFields({ role: ["role must be one of owner, admin, editor, viewer."] });
  return r;
}

export const optDate = (t: Timestamp | undefined) => (t ? timestampDate(t) : undefined);
/** An optional id of a request: unset and 0 are none. */
const optionalId = (id: bigint | undefined) => (id ? Number(id) : undefined);

function demoMessage(t: Awaited<ReturnType<typeof identity.createDemoTenant>>, capDefaults: TenantCapValues) {
  return {
    account: accountMessage(t.account),
    user: userMessage(t.user),
    project: projectMessage(t.project),
    key: keyMessage(t.key),
    token: t.token,
    plan: planMessage(t.plan, capDefaults),
  };
}

/** `capDefaults`: the CAP_* settings, what a plan that sets no cap of its own allows. */
export function accountsBillingRoutes(db: Db, capDefaults: TenantCapValues, weights: PlanWeightAnnouncer) {
  return (router: ConnectRouter) => {
    router.service(AccountsService, {
      async authenticateKey(req) {
        const p = await identity.authenticateKey(db, req.token);
        // last_used_at, kept to the minute: written only when the key's is older (the gateway asks
        // again at most every half second per key); a failed note never fails the request.
        if (keyUseIsStale(p.keyLastUsedAt)) void noteKeyUse(db, p.keyId).catch(() => {});
        return { keyId: BigInt(p.keyId), accountId: BigInt(p.accountId), user: userMessage(p.user), plan: p.plan ? planMessage(p.plan, capDefaults) : undefined, scope: scopeMessage(p.scope) };
      },
      async resolveMember(req) {
        const p = await identity.resolveMember(db, Number(req.accountId), Number(req.userId));
        return { accountId: BigInt(p.accountId), user: userMessage(p.user), plan: p.plan ? planMessage(p.plan, capDefaults) : undefined };
      },
      getUser: async (req) => ({ user: userMessage(await identity.getUser(db, Number(req.userId))) }),
      authorizeProject: async (req) => ({
        project: projectMessage(await identity.authorizeProject(db, Number(req.userId), Number(req.projectId), levelOf(req.level))),
      }),
      listViewableProjects: async (req) => ({ projects: (await identity.listViewableProjects(db, Number(req.userId))).map(projectMessage) }),
      async getProject(req) {
        const { project, plan } = await identity.getProject(db, Number(req.projectId));
        return { project: projectMessage(project), caps: capsMessage(capsInForce(plan, capDefaults)) };
      },
    });

    router.service(QuotaService, {
      async reserveWords(req) {
        const r = await quota.reserveWords(db, Number(req.accountId), req.reference, Number(req.words)).catch((error: unknown) => {
          (error instanceof DomainError ? reservationsRefused : reservationsFailed).inc();
          throw error;
        });
        await recordOrigin(db, req.reference, optionalId(req.projectId), optionalId(req.keyId));
        reservationsMade.inc();
        return { reservation: reservationMessage(r.reservation), remainingWords: BigInt(r.remainingWords) };
      },
      async settleWords(req) {
        const reservation = await quota.settleWords(db, req.reference, Number(req.actualWords));
        // The cost goes with the words for the usage report; a settlement repeated writes it again.
        if (req.costUsd !== undefined) await recordCost(db, req.reference, req.costUsd);
        return { reservation: reservationMessage(reservation) };
      },
      releaseWords: async (req) => ({ reservation: reservationMessage(await quota.releaseWords(db, req.reference)) }),
      async getWordUsage(req) {
        const u = await quota.getWordUsage(db, Number(req.accountId));
        return {
          period: u.period,
          monthlyWords: BigInt(u.monthlyWords),
          usedWords: BigInt(u.usedWords),
          reservedWords: BigInt(u.reservedWords),
          remainingWords: BigInt(u.remainingWords),
        };
      },
      async getGenerationShare(req) {
        const share = await getGenerationShare(db, Number(req.accountId));
        return { articlesInFlight: share.articlesInFlight ?? undefined, shareWeight: share.shareWeight };
      },
      getUsageReport: async (req) => usageReportMessage(await usageReport(db, Number(req.accountId))),
      listHeldReservations: async (req) => ({
        references: await quota.listHeldReservations(db, { heldLongerThanMs: Number(req.heldLongerThanMs), limit: req.limit, afterReference: req.afterReference }),
      }),
    });

    router.service(ReservationRetryService, {
      async reserveAgain(req) {
        const held = await reserveAgain(db, Number(req.accountId), req.reference, Number(req.words));
        return { words: BigInt(held.words), previouslySettled: BigInt(held.previouslySettled) };
      },
    });

    router.service(ReservationErasureService, {
      async eraseReservation(req) {
        const erased = await eraseReservation(db, req.reference, req.erasedReference);
        return { found: erased.found, wordsBilled: BigInt(erased.wordsBilled), wordsReleased: BigInt(erased.wordsReleased) };
      },
    });

    router.service(OperatorService, {
      createPlan: async (req) => ({
        plan: planMessage(
          await identity.createPlan(db, {
            name: req.name,
            monthlyWords: Number(req.monthlyWords),
            requestsPerMinute: req.requestsPerMinute,
            requestsPerHour: req.requestsPerHour,
            requestsPerDay: req.requestsPerDay,
            articlesInFlight: req.articlesInFlight,
            shareWeight: req.shareWeight,
            caps: ownCapsOfRequest(req.caps),
          }),
          capDefaults,
        ),
      }),
      async updatePlan(req) {
        const plan = await identity.updatePlan(db, Number(req.planId), {
          name: req.name,
          monthlyWords: req.monthlyWords === undefined ? undefined : Number(req.monthlyWords),
          requestsPerMinute: req.requestsPerMinute,
          requestsPerHour: req.requestsPerHour,
          requestsPerDay: req.requestsPerDay,
          articlesInFlight: articlesInFlightChange(req),
          shareWeight: req.shareWeight,
          caps: ownCapsOfRequest(req.caps, req.defaultCaps),
        });
        if (req.shareWeight !== undefined) await weights.plan(plan.id);
        return { plan: planMessage(plan, capDefaults) };
      },
      async createAccount(req) {
        const account = await identity.createAccount(db, req.name, req.planId === undefined ? undefined : Number(req.planId));
        if (account.planId !== null) await weights.accounts([account.id]);
        return { account: accountMessage(account) };
      },
      async subscribe(req) {
        const account = await identity.subscribe(db, Number(req.accountId), Number(req.planId));
        await weights.accounts([account.id]);
        return { account: accountMessage(account) };
      },
      async unsubscribe(req) {
        const account = await identity.unsubscribe(db, Number(req.accountId));
        await weights.accounts([account.id]);
        return { account: accountMessage(account) };
      },
      createUser: async (req) => ({ user: userMessage(await identity.createUser(db, req.name, req.email)) }),
      disableUser: async (req) => ({ user: userMessage(await identity.disableUser(db, Number(req.userId))) }),
      async addMember(req) {
        const m = await identity.addMember(db, Number(req.accountId), Number(req.userId), roleOf(req.role), req.projectIds.map(Number));
        return { membership: { accountId: BigInt(m.accountId), userId: BigInt(m.userId), role: req.role, projectIds: (m.projectIds ?? []).map(BigInt) } };
      },
      async removeMember(req) {
        await identity.removeMember(db, Number(req.accountId), Number(req.userId));
        return {};
      },
      createProject: async (req) => ({
        project: projectMessage(await identity.createProject(db, Number(req.accountId), req.name, req.defaultAudience)),
      }),
      async createApiKey(req) {
        const scope = req.scope && { accountOnly: req.scope.accountOnly, projectIds: req.scope.projectIds.map(Number), readOnly: req.scope.readOnly };
        const { key, token } = await identity.createApiKey(db, Number(req.accountId), Number(req.userId), optDate(req.expiresAt), scope);
        return { key: keyMessage(key), token };
      },
      revokeApiKey: async (req) => ({ key: keyMessage(await identity.revokeApiKey(db, Number(req.keyId))) }),
      listApiKeys: async (req) => ({ keys: (await identity.listApiKeys(db, Number(req.accountId))).map(keyMessage) }),
      createDemoTenant: async () => demoMessage(await identity.createDemoTenant(db), capDefaults),
      async ensureDemoTenant() {
        const created = await identity.ensureDemoTenant(db);
        return { created: created ? demoMessage(created, capDefaults) : undefined };
      },
    });
  };
}
