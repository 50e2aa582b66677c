// Signing secrets must be usable for HMAC, so they cannot be hashed: they are kept encrypted with
// AES-256-GCM. The context (e.g. the project id) is bound as associated data, so a sealed secret
// copied onto another project's row fails to open instead of signing for the wrong project.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface SealedSecret {
  /** base64 of the 12-byte nonce. */
  nonce: string;
  /** base64 of the ciphertext followed by the 16-byte authentication tag. */
  ciphertext: string;
}

export function sealSecret(key: Buffer, plaintext: string, context: string): SealedSecret {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return { nonce: nonce.toString("base64"), ciphertext: body.toString("base64") };
}

/** Throws when the key, the context or the stored bytes are not the ones it was sealed with. */
export function openSecret(key: Buffer, sealed: SealedSecret, context: string): string {
  const body = Buffer.from(sealed.ciphertext, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.nonce, "base64"));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
}
