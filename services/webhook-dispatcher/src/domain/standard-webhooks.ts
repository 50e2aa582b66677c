// Standard Webhooks (standardwebhooks.com) signing with node:crypto: the message id, the secret
// format and the three headers any Standard Webhooks library verifies.
import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";

/** The delivery's id (webhook-id): one per article version, the same on every retry. */
export const webhookMessageId = (externalId: string, versionId: number | bigint) => `msg_${externalId}_${versionId}`;

/** `whsec_` and the base64 of 32 random bytes, as Standard Webhooks libraries expect. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret's decoded bytes. */
export function webhookSignature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  const mac = createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The headers of one signed attempt; the timestamp is the attempt's own, so retries stay fresh. */
export function signatureHeaders(secret: string, messageId: string, body: string, at: Date = new Date()): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": webhookSignature(secret, messageId, timestamp, body),
  };
}
