// Who may call accounts-billing (access-policy.ts). Keys, plans, accounts and users are the
// operator's alone; the gateway resolves keys and members and reserves words; the runner settles
// and releases what generation used; article-store's reconciler releases what an article that
// never came to be holds; the dispatcher and article-store look up projects.
import { AccountsService } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { OperatorService } from "../../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { ReservationRetryService } from "../../../proto/gen/articles/accounts_billing/v1/retries_pb.ts";
import { ReservationErasureService } from "../../../proto/gen/articles/accounts_billing/v1/erasure_pb.ts";
import { QuotaService } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { SessionService, TenantAdminService } from "../../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { allow, CALLERS } from "../../kit/src/access-policy.ts";

const { gateway, articleStore, generationRunner, webhookDispatcher, operator } = CALLERS;

export const accountsBillingAccess = [
  allow(AccountsService, {
    authenticateKey: [gateway],
    resolveMember: [gateway],
    getUser: [gateway, operator],
    authorizeProject: [gateway],
    listViewableProjects: [gateway],
    getProject: [gateway, articleStore, webhookDispatcher, operator],
  }),
  allow(QuotaService, {
    reserveWords: [gateway],
    settleWords: [generationRunner],
    releaseWords: [gateway, generationRunner, articleStore],
    getWordUsage: [gateway, operator],
    getGenerationShare: [generationRunner],
    listHeldReservations: [articleStore],
    getUsageReport: [gateway, operator],
  }),
  // The dashboard's sign-in and self-service run through the gateway; the operator makes the
  // first link of a new user.
  allow(SessionService, {
    signIn: [gateway],
    authenticateSession: [gateway],
    endSession: [gateway],
    changePassword: [gateway],
    redeemLink: [gateway],
    createPasswordLink: [operator],
    requestPasswordReset: [gateway],
    signUp: [gateway],
  }),
  allow(TenantAdminService, {
    listUserAccounts: [gateway],
    switchAccount: [gateway],
    listKeys: [gateway],
    createKey: [gateway],
    revokeKey: [gateway],
    rollKey: [gateway],
    listMembers: [gateway],
    inviteMember: [gateway],
    updateMember: [gateway],
    removeAccountMember: [gateway],
    listAuditEvents: [gateway],
    // Webhook endpoint changes, which the gateway makes through webhook-dispatcher.
    recordAuditEvent: [gateway],
  }),
  // Erasing an article: DELETE /v1/articles/{id} through the gateway, or the operator on request.
  allow(ReservationErasureService, {
    eraseReservation: [gateway, operator],
  }),
  // A retry of a failed article (POST /v1/articles/{id}/retry) goes through the gateway.
  allow(ReservationRetryService, {
    reserveAgain: [gateway],
  }),
  allow(OperatorService, {
    createPlan: [operator],
    updatePlan: [operator],
    createAccount: [operator],
    subscribe: [operator],
    unsubscribe: [operator],
    createUser: [operator],
    disableUser: [operator],
    addMember: [operator],
    removeMember: [operator],
    createProject: [operator],
    createApiKey: [operator],
    listApiKeys: [operator],
    revokeApiKey: [operator],
    createDemoTenant: [operator],
    ensureDemoTenant: [operator],
  }),
];
