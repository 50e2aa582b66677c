// gRPC handlers of the dashboard's sign-in (SessionService) and of what members manage
// themselves (TenantAdminService): translations between proto messages and the domain.
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Role as ProtoRole } from "../../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { SessionService, TenantAdminService, type Acting as ActingMessage, type ManagedKeySchema, type MemberSchema } from "../../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { invalidFields, precondition } from "../../kit/src/errors.ts";
import type { Db } from "./db/client.ts";
import * as sessions from "./domain/sessions.ts";
import * as admin from "./domain/tenant-admin.ts";
import { signUp } from "./domain/sign-up.ts";
import type { Role } from "./domain/access.ts";
import { accountMessage, keyMessage, optDate, roleOf, ts, tsOpt, userMessage } from "./rpc.ts";

const PROTO_ROLE: Record<Role, ProtoRole> = { owner: ProtoRole.OWNER, admin: ProtoRole.ADMIN, editor: ProtoRole.EDITOR, viewer: ProtoRole.VIEWER };

function actingOf(acting: ActingMessage | undefined): admin.Acting {
  if (!acting?.userId || !acting.accountId) throw invalidFields({ acting: ["acting names a user and an account."] });
  return { userId: Number(acting.userId), accountId: Number(acting.accountId) };
}

const managedKeyMessage = (k: admin.ManagedKey): MessageInitShape<typeof ManagedKeySchema> => ({
  key: keyMessage(k.key),
  name: k.key.name,
  creator: userMessage(k.creator),
  lastUsedAt: tsOpt(k.key.lastUsedAt),
});

const memberMessage = (m: admin.Member): MessageInitShape<typeof MemberSchema> => ({
  user: userMessage(m.user),
  role: PROTO_ROLE[m.role],
  projectIds: m.projectIds.map(BigInt),
  hasPassword: m.user.passwordHash !== null,
  viewOnlyProjectIds: m.viewOnlyProjectIds.map(BigInt),
});

/** The mail sender as the handlers see it: undefined when no mail is configured. */
export interface Mailing {
  /** Mail was queued: the sender looks at the outbox now. */
  wake(): void;
}

const accessOf = (req: { role: ProtoRole; projectIds: bigint[]; viewOnlyProjectIds: bigint[] }): admin.MemberAccess => ({
  role: roleOf(req.role),
  projectIds: req.projectIds.map(Number),
  viewOnlyProjectIds: req.viewOnlyProjectIds.map(Number),
});

const sessionMessage = (s: sessions.StartedSession) => ({ sessionToken: s.token, user: userMessage(s.user), expiresAt: ts(s.expiresAt) });

export function selfServiceRoutes(db: Db, mailing?: Mailing) {
  const requireMail = (): Mailing => {
    if (!mailing) throw precondition("No mail is configured.");
    return mailing;
  };
  return (router: ConnectRouter) => {
    router.service(SessionService, {
      signIn: async (req) => sessionMessage(await sessions.signIn(db, req.email, req.password)),
      async authenticateSession(req) {
        const s = await sessions.authenticateSession(db, req.sessionToken);
        return { sessionId: BigInt(s.sessionId), user: userMessage(s.user), expiresAt: ts(s.expiresAt) };
      },
      async endSession(req) {
        await sessions.endSession(db, req.sessionToken);
        return {};
      },
      changePassword: async (req) => ({ endedSessions: await sessions.changePassword(db, req.sessionToken, req.currentPassword, req.newPassword) }),
      redeemLink: async (req) => ({ session: sessionMessage(await sessions.redeemLink(db, req.linkToken, req.password)) }),
      async createPasswordLink(req) {
        const link = await sessions.createPasswordLink(db, Number(req.userId));
        return { linkToken: link.token, expiresAt: ts(link.expiresAt) };
      },
      async requestPasswordReset(req) {
        const mail = requireMail();
        await sessions.requestPasswordReset(db, req.email);
        mail.wake();
        return {};
      },
      async signUp(req) {
        const mail = requireMail();
        if (await signUp(db, req.plan, { email: req.email, name: req.name, accountName: req.accountName })) mail.wake();
        return {};
      },
    });

    router.service(TenantAdminService, {
      listUserAccounts: async (req) => ({
        accounts: (await admin.listUserAccounts(db, Number(req.userId))).map((a) => ({ account: accountMessage({ ...a, planId: null }), role: PROTO_ROLE[a.role] })),
      }),
      switchAccount: async (req) => ({ user: userMessage(await admin.switchAccount(db, actingOf(req.acting))) }),
      listKeys: async (req) => ({ keys: (await admin.listKeys(db, actingOf(req.acting))).map(managedKeyMessage) }),
      async createKey(req) {
        const scope = req.scope && { accountOnly: req.scope.accountOnly, projectIds: req.scope.projectIds.map(Number), readOnly: req.scope.readOnly };
        const { key, token } = await admin.createKey(db, actingOf(req.acting), { name: req.name, expiresAt: optDate(req.expiresAt), scope });
        return { key: managedKeyMessage(key), token };
      },
      revokeKey: async (req) => ({ key: managedKeyMessage(await admin.revokeKey(db, actingOf(req.acting), Number(req.keyId))) }),
      async rollKey(req) {
        const rolled = await admin.rollKey(db, actingOf(req.acting), Number(req.keyId), req.graceSeconds);
        return { key: managedKeyMessage(rolled.key), token: rolled.token, oldKey: managedKeyMessage(rolled.oldKey) };
      },
      listMembers: async (req) => ({ members: (await admin.listMembers(db, actingOf(req.acting))).map(memberMessage) }),
      async inviteMember(req) {
        const { member, link, mailed } = await admin.inviteMember(db, actingOf(req.acting), { email: req.email, name: req.name, ...accessOf(req) }, { mailing: !!mailing });
        if (mailed) mailing?.wake();
        return { member: memberMessage(member), linkToken: link?.token, linkExpiresAt: link ? ts(link.expiresAt) : undefined, mailed };
      },
      updateMember: async (req) => ({ member: memberMessage(await admin.updateMember(db, actingOf(req.acting), Number(req.userId), accessOf(req))) }),
      async removeAccountMember(req) {
        await admin.removeMember(db, actingOf(req.acting), Number(req.userId));
        return {};
      },
      listAuditEvents: async (req) => ({
        events: (await admin.listAuditEvents(db, actingOf(req.acting), req.limit)).map(({ event, actor }) => ({
          id: BigInt(event.id),
          actor: userMessage(actor),
          action: event.action,
          subject: event.subject,
          createdAt: ts(event.createdAt),
        })),
      }),
      async recordAuditEvent(req) {
        await admin.recordAuditEvent(db, actingOf(req.acting), req.action, req.subject);
        return {};
      },
    });
  };
}
