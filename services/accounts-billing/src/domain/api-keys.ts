// API key tokens: high-entropy random secrets, so a plain SHA-256 is a safe lookup hash
// (no salt needed: there is nothing to brute-force). The token never leaves this module
// except in the one creation response.
import { createHash, randomBytes } from "node:crypto";

const TOKEN_PREFIX = "agk_";
const TOKEN_SHAPE = /^agk_[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Malformed tokens are refused before any lookup. */
export const isWellFormedToken = (token: string) => TOKEN_SHAPE.test(token);

/** What an operator sees in listings to recognise a key. */
export const displayPrefix = (token: string) => token.slice(0, 12);
