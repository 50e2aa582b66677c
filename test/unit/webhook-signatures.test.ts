// Standard Webhooks signing (verified with the reference `standardwebhooks` package) and the
// encryption that keeps signing secrets at rest.
import { describe, expect, test } from "bun:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { randomBytes } from "node:crypto";
import { ConfigError } from "../../services/kit/src/config.ts";
import { signingSecretKey } from "../../services/webhook-dispatcher/src/config.ts";
import { openSecret, sealSecret } from "../../services/webhook-dispatcher/src/domain/secret-box.ts";
import { newSigningSecret, signatureHeaders, webhookMessageId } from "../../services/webhook-dispatcher/src/domain/standard-webhooks.ts";

const body = JSON.stringify({ success: true, data: { external_id: "2b1c6f4e-7d1a-4c53-9d7e-0a6b1c2d3e4f" } });

describe("Standard Webhooks signatures", () => {
  test("a secret is whsec_ and the base64 of 32 random bytes, different every time", () => {
    const a = newSigningSecret();
    const b = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), "base64").length).toBe(32);
    expect(a).not.toBe(b);
  });

  test("the reference library verifies the headers and returns the payload", () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders(secret, "msg_abc_7", body);
    expect(Object.keys(headers).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
    expect(headers["webhook-id"]).toBe("msg_abc_7");
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Number(headers["webhook-timestamp"])).toBeCloseTo(Date.now() / 1000, -1);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("another secret, a changed body or a replayed old timestamp fail verification", () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders(secret, "msg_abc_7", body);
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body.replace("true", "false"), headers)).toThrow(WebhookVerificationError);
    const old = signatureHeaders(secret, "msg_abc_7", body, new Date(Date.now() - 10 * 60_000));
    expect(() => new Webhook(secret).verify(body, old)).toThrow(WebhookVerificationError);
  });

  test("the library's own signature matches ours byte for byte", () => {
    const secret = newSigningSecret();
    const at = new Date("2030-01-02T03:04:05Z");
    expect(signatureHeaders(secret, "msg_x_1", body, at)["webhook-signature"]).toBe(new Webhook(secret).sign("msg_x_1", at, body));
  });

  test("the message id is stable per article version", () => {
    expect(webhookMessageId("2b1c6f4e-7d1a-4c53-9d7e-0a6b1c2d3e4f", 12)).toBe("msg_2b1c6f4e-7d1a-4c53-9d7e-0a6b1c2d3e4f_12");
    expect(webhookMessageId("e", 12n)).toBe(webhookMessageId("e", 12));
  });
});

describe("signing secrets at rest", () => {
  const key = randomBytes(32);

  test("sealed secrets open with the same key and context only", () => {
    const secret = newSigningSecret();
    const sealed = sealSecret(key, secret, "signing-secret:project:1");
    expect(sealed.ciphertext).not.toContain(secret.slice(6, 20));
    expect(openSecret(key, sealed, "signing-secret:project:1")).toBe(secret);
    expect(() => openSecret(randomBytes(32), sealed, "signing-secret:project:1")).toThrow();
    expect(() => openSecret(key, sealed, "signing-secret:project:2")).toThrow();
  });

  test("a tampered ciphertext does not open", () => {
    const sealed = sealSecret(key, newSigningSecret(), "ctx");
    const bytes = Buffer.from(sealed.ciphertext, "base64");
    bytes[3]! ^= 0x01;
    expect(() => openSecret(key, { ...sealed, ciphertext: bytes.toString("base64") }, "ctx")).toThrow();
  });

  test("two seals of one secret differ (fresh nonce each time)", () => {
    const secret = newSigningSecret();
    expect(sealSecret(key, secret, "ctx").ciphertext).not.toBe(sealSecret(key, secret, "ctx").ciphertext);
  });

  test("WEBHOOK_SECRET_KEY is required, 32 bytes of base64, and never derived from another credential", () => {
    const given = randomBytes(32).toString("base64");
    expect(signingSecretKey({ WEBHOOK_SECRET_KEY: given }).equals(Buffer.from(given, "base64"))).toBe(true);
    expect(() => signingSecretKey({})).toThrow(/WEBHOOK_SECRET_KEY: required/);
    for (const bad of ["short", randomBytes(16).toString("base64"), "not base64 at all!!"]) {
      expect(() => signingSecretKey({ WEBHOOK_SECRET_KEY: bad })).toThrow(ConfigError);
    }
  });
});
