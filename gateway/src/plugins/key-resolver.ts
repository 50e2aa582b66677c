// Resolves bearer tokens through accounts-billing, remembered briefly (see short-memory.ts).
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { AuthenticateKeyResponseSchema, type AuthenticateKeyResponse } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ServiceClients } from "../services.ts";
import { ShortMemory, SHORT_MEMORY_MS } from "./short-memory.ts";

export const KEY_CACHE_MS = SHORT_MEMORY_MS;

export class KeyResolver {
  /** null: the token does not resolve. */
  private readonly memory: ShortMemory<AuthenticateKeyResponse | null>;
  /** null: the user is not a member of the account. */
  private readonly members: ShortMemory<AuthenticateKeyResponse | null>;

  constructor(
    private readonly clients: ServiceClients,
    ttlMs = KEY_CACHE_MS,
  ) {
    this.memory = new ShortMemory(ttlMs);
    this.members = new ShortMemory(ttlMs);
  }

  /** A member acting on an account (a granted workload's call), as a key resolves; null when not a member. */
  resolveMember(accountId: number, userId: number): Promise<AuthenticateKeyResponse | null> {
    return this.members.get(`${accountId}:${userId}`, () =>
      this.clients.accounts.resolveMember({ accountId: BigInt(accountId), userId: BigInt(userId) }).then(
        (member) => create(AuthenticateKeyResponseSchema, { keyId: 0n, accountId: member.accountId, user: member.user, plan: member.plan }),
        (error) => {
          if (error instanceof ConnectError && error.code === Code.NotFound) return null;
          throw error;
        },
      ),
    );
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
