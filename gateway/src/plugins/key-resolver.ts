// Resolves bearer tokens through accounts-billing. A resolved key is remembered for half a
// second, so a burst of requests costs one lookup; the service promises that revoking or expiring
// a key, disabling a user, ending a subscription or removing a member takes effect within one
// second, and half a second keeps well inside that. Concurrent lookups of one token share a call.
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AuthenticateKeyResponse } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ServiceClients } from "../services.ts";

export const KEY_CACHE_MS = 500;
const MAX_ENTRIES = 10_000;

interface Entry {
  expires: number;
  /** null: the token does not resolve. */
  resolved: Promise<AuthenticateKeyResponse | null>;
}

export class KeyResolver {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clients: ServiceClients,
    private readonly ttlMs = KEY_CACHE_MS,
  ) {}

  /** The key's account, user and plan, or null when the token does not resolve. */
  resolve(token: string): Promise<AuthenticateKeyResponse | null> {
    // Entries are keyed by a digest so the map holds no usable token.
    const id = createHash("sha256").update(token).digest("base64url");
    const now = Date.now();
    const cached = this.entries.get(id);
    if (cached && cached.expires > now) return cached.resolved;
    const resolved = this.clients.accounts.authenticateKey({ token }).catch((error) => {
      if (error instanceof ConnectError && error.code === Code.Unauthenticated) return null;
      this.entries.delete(id); // a failed lookup is not remembered
      throw error;
    });
    if (this.entries.size >= MAX_ENTRIES) this.evictExpired(now);
    this.entries.set(id, { expires: now + this.ttlMs, resolved });
    return resolved;
  }

  private evictExpired(now: number): void {
    for (const [id, entry] of this.entries) if (entry.expires <= now) this.entries.delete(id);
    // Still full: drop the oldest half (Map keeps insertion order).
    if (this.entries.size >= MAX_ENTRIES) {
      let drop = Math.floor(MAX_ENTRIES / 2);
      for (const id of this.entries.keys()) {
        if (drop-- <= 0) break;
        this.entries.delete(id);
      }
    }
  }
}
