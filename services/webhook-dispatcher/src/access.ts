// Who may call webhook-dispatcher (access-policy.ts): signing secrets are the operator's alone.
import { WebhookSigningService } from "../../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { allow, CALLERS } from "../../kit/src/access-policy.ts";

const { operator } = CALLERS;

export const webhookDispatcherAccess = [
  allow(WebhookSigningService, {
    setSigningSecret: [operator],
    removeSigningSecret: [operator],
    getSigningStatus: [operator],
  }),
];
