// Resolves bearer tokens through accounts-billing, remembered briefly (see short-memory.ts).
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AuthenticateKeyResponse } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ServiceClients } from "../services.ts";
import { ShortMemory, SHORT_MEMORY_MS } from "./short-memory.ts";

export const KEY_CACHE_MS = SHORT_MEMORY_MS;

export class KeyResolver {
  /** null: the token does not resolve. */
  private readonly memory: ShortMemory<AuthenticateKeyResponse | null>;

  constructor(
    private readonly clients: ServiceClients,
    ttlMs = KEY_CACHE_MS,
  ) {
    this.memory = new ShortMemory(ttlMs);
  }

  /** The key's account, user and plan, or null when the token does not resolve. */
  resolve(token: string): Promise<AuthenticateKeyResponse | null> {
    // Entries are keyed by a digest so the memory holds no usable token.
    const id = createHash("sha256").update(token).digest("base64url");
    return this.memory.get(id, () =>
      this.clients.accounts.authenticateKey({ token }).catch((error) => {
        if (error instanceof ConnectError && error.code === Code.Unauthenticated) return null;
        throw error;
      }),
    );
  }
}
