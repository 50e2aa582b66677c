// The user record of spec 2.6: no credential or internal fields.
import { iso, optionalNumber } from "../../../services/kit/src/public-article.ts";
import type { User } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";


export function presentUser(user: User) {
  return {
    id: Number(user.id),
    name: user.name,
    email: user.email,
    email_verified_at: iso(user.emailVerifiedAt),
    current_account_id: optionalNumber(user.currentAccountId),
    current_project_id: optionalNumber(user.currentProjectId),
    created_at: iso(user.createdAt),
    updated_at: iso(user.updatedAt),
  };
}
