// Workload identity outside Kubernetes: the launcher plays the cluster's part. It holds a signing
// key, publishes its public half as a JWKS file, and writes each process a token of the shape a
// projected ServiceAccount token has (`sub: system:serviceaccount:<namespace>:<name>`, an
// audience, an issuer, an expiry), renewed well before it expires. The processes verify with the
// same code as on Kubernetes (services/kit/src/workload-identity.ts); only where the keys come
// from differs.
//
// Rotation without downtime: `rotate()` adds a new key beside the old one (both published), signs
// every token again with it, and `retireOldKeys()` later drops the old one, as a cluster does
// with its service-account signing keys.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import { DEFAULT_AUDIENCE, DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_NAMESPACE, type Credential } from "../../services/kit/src/workload-identity.ts";

export const LOCAL_ISSUER = "urn:article-service:local-launcher";
/**
 * A token lives an hour, the longest the verifiers take by default (IDENTITY_TOKEN_MAX_SECONDS), and
 * is renewed every 20 minutes, as the kubelet renews a projected token well before it expires: a
 * process reads its file again within 30 s, so it never sends one near its end.
 */
const TOKEN_LIFETIME_S = DEFAULT_MAX_LIFETIME_SECONDS;
const RENEW_EVERY_MS = (TOKEN_LIFETIME_S * 1000) / 3;
const ALGORITHM = "ES256";

interface SigningKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

export interface WorkloadTokens {
  /** The environment every process verifies with: IDENTITY_JWKS, IDENTITY_ISSUER, IDENTITY_AUDIENCE, IDENTITY_NAMESPACE. */
  env: Record<string, string>;
  /** The token file of a caller (`gateway`, `operator`, `team-a/reporter`), written on first ask. */
  tokenFile(caller: string): Promise<string>;
  /** The caller's current token, once its file has been written (tokenFile, credential). */
  currentToken(caller: string): string | undefined;
  /** A credential that always carries the caller's current token (tests, the launcher's own calls). */
  credential(caller: string): Promise<Credential>;
  /** A token for any caller, signed now; `lifetimeSeconds` may be negative (an expired token). */
  mint(caller: string, options?: { lifetimeSeconds?: number; audience?: string }): Promise<string>;
  /** Exactly these claims signed with the current key, nothing added (tests of what a verifier refuses). */
  sign(claims: JWTPayload): Promise<string>;
  /** Publishes a new key beside the current ones and signs every token file again with it. */
  rotate(): Promise<void>;
  /** Drops every key but the newest from the published set. */
  retireOldKeys(): void;
  stop(): void;
}

const subjectOf = (caller: string, namespace: string) => {
  const [ns, name] = caller.includes("/") ? caller.split("/") : [namespace, caller];
  return `system:serviceaccount:${ns}:${name}`;
};

async function newSigningKey(): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const kid = randomBytes(8).toString("hex");
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALGORITHM }, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALGORITHM, use: "sig" } };
}

/** Writes a file whole (a process reading it never sees half of it), readable by this user only. */
function writeWhole(file: string, text: string) {
  const staging = `${file}.${randomBytes(4).toString("hex")}`;
  writeFileSync(staging, text, { mode: 0o600 });
  renameSync(staging, file);
}

/**
 * The launcher's keys and tokens in `dir`: kept across starts (npm start keeps .local/identity, so
 * the operator CLI's token stays valid), or made fresh in a directory of the caller's (tests).
 */
export async function prepareWorkloadTokens(dir: string): Promise<WorkloadTokens> {
  mkdirSync(join(dir, "tokens"), { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const keysFile = join(dir, "signing-keys.json");
  const jwksFile = join(dir, "jwks.json");
  if (!existsSync(keysFile)) {
    // Made once; two launchers starting at once keep whichever key was written first.
    try {
      writeFileSync(keysFile, JSON.stringify([await newSigningKey()]), { mode: 0o600, flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  let keys: SigningKey[] = JSON.parse(readFileSync(keysFile, "utf8"));
  const publish = () => {
    writeWhole(keysFile, JSON.stringify(keys));
    writeWhole(jwksFile, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  };
  publish();
  const namespace = DEFAULT_NAMESPACE;
  const tokens = new Map<string, string>();

  const sign = async (claims: JWTPayload) => {
    const key = keys[keys.length - 1];
    return new SignJWT(claims).setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: "JWT" }).sign(await importJWK(key.privateJwk, ALGORITHM));
  };
  // iat and exp always: the verifiers refuse a token without them.
  const mint = async (caller: string, options: { lifetimeSeconds?: number; audience?: string } = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + (options.lifetimeSeconds ?? TOKEN_LIFETIME_S);
    return sign({ iss: LOCAL_ISSUER, aud: options.audience ?? DEFAULT_AUDIENCE, sub: subjectOf(caller, namespace), iat: now, nbf: now, exp });
  };
  const fileOf = (caller: string) => join(dir, "tokens", `${caller.replace("/", "__")}.jwt`);
  const renew = async (caller: string) => {
    const token = await mint(caller);
    tokens.set(caller, token);
    writeWhole(fileOf(caller), token + "\n");
  };
  const renewAll = async () => {
    for (const caller of tokens.keys()) await renew(caller);
  };
  const timer = setInterval(() => void renewAll().catch(() => {}), RENEW_EVERY_MS);
  timer.unref?.();

  const tokenFile = async (caller: string) => {
    if (!tokens.has(caller)) await renew(caller);
    return fileOf(caller);
  };
  return {
    env: { IDENTITY_JWKS: jwksFile, IDENTITY_ISSUER: LOCAL_ISSUER, IDENTITY_AUDIENCE: DEFAULT_AUDIENCE, IDENTITY_NAMESPACE: namespace },
    tokenFile,
    currentToken: (caller) => tokens.get(caller),
    async credential(caller) {
      await tokenFile(caller);
      return { authorization: () => `Bearer ${tokens.get(caller)}` };
    },
    mint,
    sign,
    async rotate() {
      keys = [...keys, await newSigningKey()];
      publish();
      await renewAll();
    },
    retireOldKeys() {
      keys = keys.slice(-1);
      publish();
    },
    stop: () => clearInterval(timer),
  };
}
