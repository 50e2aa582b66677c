// The dashboard API's JSON of keys, members, accounts and audit events (never a token or a hash).
import { Role } from "../../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import type { AuditEvent, ManagedKey, Member, UserAccount } from "../../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import type { User } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { iso } from "../../../services/kit/src/public-article.ts";

export const ROLE_NAMES: Record<string, Role> = { owner: Role.OWNER, admin: Role.ADMIN, editor: Role.EDITOR, viewer: Role.VIEWER };
const NAME_OF_ROLE = new Map(Object.entries(ROLE_NAMES).map(([name, role]) => [role, name]));
export const roleName = (role: Role) => NAME_OF_ROLE.get(role) ?? "unknown";

const person = (u: User | undefined) => (u ? { id: Number(u.id), name: u.name, email: u.email } : null);

export function presentKey(k: ManagedKey) {
  const key = k.key!;
  return {
    id: Number(key.id),
    name: k.name,
    prefix: key.prefix,
    creator: person(k.creator),
    created_at: iso(key.createdAt),
    last_used_at: iso(k.lastUsedAt),
    expires_at: iso(key.expiresAt),
    revoked_at: iso(key.revokedAt),
    scope: key.scope ? { account_only: key.scope.accountOnly, project_ids: key.scope.projectIds.map(Number), read_only: key.scope.readOnly } : null,
  };
}

export function presentMember(m: Member) {
  return { user: person(m.user), role: roleName(m.role), project_ids: m.projectIds.map(Number), view_only_project_ids: m.viewOnlyProjectIds.map(Number), has_password: m.hasPassword, disabled: m.user?.disabled ?? false };
}

export const presentAccount = (a: UserAccount) => ({ id: Number(a.account!.id), name: a.account!.name, role: roleName(a.role) });

export const presentAuditEvent = (e: AuditEvent) => ({ id: Number(e.id), actor: person(e.actor), action: e.action, subject: e.subject, created_at: iso(e.createdAt) });
