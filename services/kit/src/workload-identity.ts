// Who is calling: every process of the stack, the operator CLI and each internal team's workload
// proves who it is with a signed token (a JWT), never with a shared secret. On Kubernetes the
// token is the workload's projected ServiceAccount token, audience-bound, rotated by the kubelet,
// and verified against the cluster's published keys (its OIDC discovery JWKS); outside Kubernetes
// (`npm start`, the tests) the launcher makes the keys and tokens in the same shape
// (deploy/local/workload-tokens.ts), so one verification path runs everywhere.
//
// A caller is named by its ServiceAccount: `gateway` for `system:serviceaccount:<stack>:gateway`
// when <stack> is IDENTITY_NAMESPACE, `<namespace>/<name>` for a workload elsewhere (an internal
// team's). What each caller may call is the services' access tables (access-policy.ts).
import { readFileSync, statSync } from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import ipaddr from "ipaddr.js";
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet, type JWK } from "jose";
import { ConfigError, envBool, envInt, envOptional, envString, type Env } from "./env.ts";
import type { Logger } from "./logger.ts";

export interface IdentitySettings {
  /** IDENTITY_TOKEN_FILE: this process's own token (on Kubernetes, its projected ServiceAccount token). */
  tokenFile: string;
  /** IDENTITY_JWKS: the keys callers' tokens are signed with: a file, or an https URL such as https://kubernetes.default.svc/openid/v1/jwks (http only in a development setup, see jwksSourceProblem). */
  jwks: string;
  /** IDENTITY_JWKS_TOKEN_FILE: a bearer token sent when fetching IDENTITY_JWKS (the cluster's JWKS endpoint wants one). */
  jwksTokenFile?: string;
  /** IDENTITY_JWKS_CA_FILE: the certificate authority of IDENTITY_JWKS's https server (the cluster's CA). */
  jwksCaFile?: string;
  /** IDENTITY_ISSUER: the `iss` every token must carry (the cluster's service-account issuer). */
  issuer: string;
  /** IDENTITY_AUDIENCE: the `aud` every token must carry, so a token made for another system is refused. */
  audience: string;
  /** IDENTITY_NAMESPACE: the stack's own namespace; its ServiceAccounts are named without it. */
  namespace: string;
  /** IDENTITY_TOKEN_MAX_SECONDS: the longest lifetime (exp - iat) a token may have. */
  maxLifetimeSeconds: number;
}

export const DEFAULT_AUDIENCE = "article-service";
export const DEFAULT_NAMESPACE = "article-service";
/**
 * An hour: a token cannot be revoked, so a stolen one is good until it expires, and this bounds
 * how long. A cluster's projected tokens live an hour and the kubelet renews them well within it
 * (at 80% of their life); the launcher's live an hour too. Longer only by IDENTITY_TOKEN_MAX_SECONDS.
 */
export const DEFAULT_MAX_LIFETIME_SECONDS = 3600;

export function loadIdentitySettings(env: Env): IdentitySettings {
  const required = (name: string, what: string) => {
    const value = envOptional(env, name);
    if (value === undefined) throw new ConfigError(name, `required: ${what} (npm start sets it; on Kubernetes the manifests do)`);
    return value;
  };
  const jwks = required("IDENTITY_JWKS", "where the keys that sign callers' tokens are published (a file or an https URL)");
  const problem = jwksSourceProblem(jwks, envBool(env, "ALLOW_PRIVATE_URLS", false));
  if (problem) throw new ConfigError("IDENTITY_JWKS", problem);
  return {
    tokenFile: required("IDENTITY_TOKEN_FILE", "the file holding this process's own identity token"),
    jwks,
    jwksTokenFile: envOptional(env, "IDENTITY_JWKS_TOKEN_FILE"),
    jwksCaFile: envOptional(env, "IDENTITY_JWKS_CA_FILE"),
    issuer: required("IDENTITY_ISSUER", "the issuer every caller's token must name"),
    audience: envString(env, "IDENTITY_AUDIENCE", DEFAULT_AUDIENCE),
    namespace: envString(env, "IDENTITY_NAMESPACE", DEFAULT_NAMESPACE),
    maxLifetimeSeconds: envInt(env, "IDENTITY_TOKEN_MAX_SECONDS", DEFAULT_MAX_LIFETIME_SECONDS, { min: 60, max: 30 * 86_400 }),
  };
}

/**
 * Why IDENTITY_JWKS cannot be where the keys come from, or undefined: the keys decide who may call
 * what, so they come from a file or over https. Plain http is for a development setup
 * (ALLOW_PRIVATE_URLS) and only to this machine or a private network, named by address or as
 * localhost, so that no name resolved elsewhere can hand out keys.
 */
export function jwksSourceProblem(jwks: string, allowPrivateUrls: boolean): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(jwks)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === "https") return undefined;
  if (scheme !== "http") return `expected a file or an https URL, got a ${scheme}: URL`;
  if (!allowPrivateUrls) return "expected a file or an https URL; plain http is only for a development setup (ALLOW_PRIVATE_URLS=true) on a loopback or private address";
  let host: string;
  try {
    host = new URL(jwks).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return "not a valid URL";
  }
  if (host === "localhost" || host.endsWith(".localhost")) return undefined;
  if (ipaddr.isValid(host) && PRIVATE_RANGES.has(ipaddr.process(host).range())) return undefined;
  return `plain http reaches only a loopback or private address given as such (localhost, 127.0.0.1, 10.x, ...), not ${host}; use https`;
}

const PRIVATE_RANGES = new Set(["loopback", "private", "uniqueLocal", "linkLocal"]);

/** A caller's name from a token's subject, or undefined when it is not a ServiceAccount's. */
export function callerOfSubject(subject: string, namespace: string): string | undefined {
  const match = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(subject);
  if (!match) return undefined;
  return match[1] === namespace ? match[3] : `${match[1]}/${match[3]}`;
}

/** How often a token file is read again: the kubelet renews a projected token well before it expires. */
const TOKEN_REREAD_MS = 30_000;

/**
 * This process's own token, read from its file at start (a missing or empty file is one line
 * naming IDENTITY_TOKEN_FILE) and again whenever the file changes, so a renewed token is used
 * without a restart.
 */
export class OwnToken {
  private token: string;
  private modified: number;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly file: string, variable = "IDENTITY_TOKEN_FILE") {
    try {
      this.modified = statSync(file).mtimeMs;
      this.token = readFileSync(file, "utf8").trim();
    } catch (error) {
      throw new ConfigError(variable, `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (!this.token) throw new ConfigError(variable, `${file} is empty`);
    this.timer = setInterval(() => this.reread(), TOKEN_REREAD_MS);
    this.timer.unref?.();
  }

  /** The `authorization` header value of this process's calls. */
  authorization(): string {
    return `Bearer ${this.token}`;
  }

  reread(): void {
    try {
      const modified = statSync(this.file).mtimeMs;
      if (modified === this.modified) return;
      const token = readFileSync(this.file, "utf8").trim();
      if (token) [this.token, this.modified] = [token, modified];
    } catch {
      // Being replaced (the kubelet swaps a symlink): the current token serves until the next look.
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/** A credential callers attach: this process's token, or a fixed one (tests that call as a given workload). */
export interface Credential {
  authorization(): string;
}

export const fixedCredential = (token: string): Credential => ({ authorization: () => `Bearer ${token}` });

/**
 * The key set is read again this often, and when a token names a key not in it (a rotation has
 * begun), at most once a second: a call that comes sooner waits for that read rather than fail,
 * and tokens naming made-up keys cost at most one read a second.
 */
const KEYS_REFRESH_MS = 5 * 60_000;
const UNKNOWN_KEY_REFRESH_MS = 1000;
/** Verified tokens remembered per process; a stack's callers hold a handful. */
const REMEMBERED_TOKENS = 10_000;
/** Retired keys remembered, to say so when a token still names one. */
const REMEMBERED_RETIRED_KEYS = 100;
/** Clocks of the token's issuer and of this process may differ by this much. */
const CLOCK_TOLERANCE_S = 30;
const ALGORITHMS = new Set(["RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"]);

interface Verified {
  caller: string;
  expiresAt: number;
  kid: string | undefined;
}

/**
 * The one algorithm a published key signs with: its `alg` (a cluster's keys name it), else the one
 * its type and curve imply (RSA keys without `alg`: RS256, the algorithm of ServiceAccount tokens).
 */
function algorithmOf(key: JWK): string | undefined {
  if (key.alg) return key.alg;
  if (key.kty === "RSA") return "RS256";
  if (key.kty === "EC") return { "P-256": "ES256", "P-384": "ES384", "P-521": "ES512" }[key.crv ?? ""];
  if (key.kty === "OKP") return "EdDSA";
  return undefined;
}

/** Why jose refused a token, in the words of the log line (jose's messages never hold the token). */
function refusalOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "it has expired (exp)";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") return `it carries no ${error.claim}`;
    if (error.claim === "iss") return "another issuer (iss) signed it";
    if (error.claim === "aud") return "it is meant for another audience (aud)";
    if (error.claim === "nbf") return "it is not valid yet (nbf in the future)";
    return `its ${error.claim} claim is invalid (${error.message})`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (error instanceof errors.JOSEAlgNotAllowed) return "its algorithm is not its key's";
  return `it does not verify (${(error as Error).message})`;
}

/**
 * Checks callers' tokens: signature against the published keys with the key's own algorithm,
 * issuer, audience, a lifetime (exp - iat) within IDENTITY_TOKEN_MAX_SECONDS, not issued in the
 * future nor before its nbf, and a ServiceAccount subject. A refused token is UNAUTHENTICATED and
 * one log line naming why (never the token). A token is verified once and then remembered until it
 * expires, so a call costs one map look-up; a key that leaves the key set takes the tokens it
 * signed with it at the next refresh, and a key added (rotation: two are published for a while) is
 * fetched the first time a token names it.
 */
export class CallerVerifier {
  private keys: ReturnType<typeof createLocalJWKSet> | undefined;
  private published = new Map<string | undefined, JWK>();
  private readonly retired = new Set<string>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  private readonly verified = new Map<string, Verified>();

  constructor(
    private readonly settings: Pick<IdentitySettings, "jwks" | "jwksTokenFile" | "jwksCaFile" | "issuer" | "audience" | "namespace" | "maxLifetimeSeconds">,
    private readonly logger: Pick<Logger, "warn">,
  ) {}

  /** The caller a bearer token names; UNAUTHENTICATED when it does not verify. */
  async callerOf(authorization: string | null): Promise<string> {
    const token = authorization?.startsWith("Bearer ") ? authorization.slice(7).trim() : "";
    if (!token) throw this.refuse("no workload credential was sent");
    const now = Date.now();
    const known = this.verified.get(token);
    if (known && known.expiresAt > now) return known.caller;
    if (now - this.loadedAt > KEYS_REFRESH_MS) await this.loadKeys();
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw this.refuse("it is not a signed token");
    }
    const { kid, alg } = header;
    if (!alg || !ALGORITHMS.has(alg)) throw this.refuse(`its algorithm ${alg ?? "(none named)"} is not one of a published key's`);
    if (!this.published.has(kid)) {
      const wait = this.loadedAt + UNKNOWN_KEY_REFRESH_MS - Date.now();
      if (wait > 0) await Bun.sleep(wait);
      if (!this.published.has(kid) && Date.now() - this.loadedAt >= UNKNOWN_KEY_REFRESH_MS) await this.loadKeys();
      else await this.loading;
    }
    const key = this.published.get(kid);
    if (!key) throw this.refuse(kid !== undefined && this.retired.has(kid) ? `its key ${kid} has been retired` : `its key ${kid ?? "(none named)"} is not published, even after reading the keys again`);
    const keyAlgorithm = algorithmOf(key);
    if (alg !== keyAlgorithm) throw this.refuse(`its algorithm ${alg} is not its key's (${keyAlgorithm ?? "unknown"})`);
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keys!, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: [keyAlgorithm],
        requiredClaims: ["exp", "iat"],
        clockTolerance: CLOCK_TOLERANCE_S,
      }));
    } catch (error) {
      throw this.refuse(refusalOf(error));
    }
    const [exp, iat] = [payload.exp!, payload.iat!];
    if (exp - iat > this.settings.maxLifetimeSeconds) throw this.refuse(`its lifetime (exp - iat) is ${exp - iat} s, longer than IDENTITY_TOKEN_MAX_SECONDS (${this.settings.maxLifetimeSeconds} s)`);
    // A lifetime counts from iat: one issued in the future would outlive the maximum from now.
    if (iat * 1000 > now + CLOCK_TOLERANCE_S * 1000) throw this.refuse("it was issued in the future (iat)");
    const caller = payload.sub ? callerOfSubject(payload.sub, this.settings.namespace) : undefined;
    if (!caller) throw this.refuse("it names no ServiceAccount (sub)");
    if (this.verified.size >= REMEMBERED_TOKENS) this.forget((v) => v.expiresAt <= now);
    if (this.verified.size >= REMEMBERED_TOKENS) this.verified.clear();
    this.verified.set(token, { caller, expiresAt: exp * 1000, kid });
    return caller;
  }

  /** Reads the key set now (a test, or an operator's signal after retiring a key). */
  refreshKeys(): Promise<void> {
    return this.loadKeys();
  }

  private refuse(reason: string): ConnectError {
    this.logger.warn("workload credential refused", { reason });
    return new ConnectError(`the workload credential is refused: ${reason}`, Code.Unauthenticated);
  }

  private forget(drop: (v: Verified) => boolean) {
    for (const [token, v] of this.verified) if (drop(v)) this.verified.delete(token);
  }

  private loadKeys(): Promise<void> {
    this.loading ??= this.fetchKeys().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async fetchKeys(): Promise<void> {
    let set: JSONWebKeySet;
    try {
      set = await readKeySet(this.settings);
    } catch (error) {
      // Keys once loaded keep serving through a blip of the key endpoint; none at all refuses.
      this.loadedAt = Date.now() - KEYS_REFRESH_MS + UNKNOWN_KEY_REFRESH_MS;
      if (this.keys) return;
      throw new ConnectError(`the workload keys cannot be read (${(error as Error).message})`, Code.Unavailable);
    }
    this.keys = createLocalJWKSet(set);
    const published = new Map(set.keys.map((k) => [k.kid, k] as const));
    for (const kid of this.published.keys()) if (kid !== undefined && !published.has(kid)) this.retired.add(kid);
    for (const kid of this.retired) if (this.retired.size > REMEMBERED_RETIRED_KEYS || published.has(kid)) this.retired.delete(kid);
    this.published = published;
    this.loadedAt = Date.now();
    // A key that left the set no longer vouches for the tokens it signed.
    this.forget((v) => !this.published.has(v.kid));
  }
}

async function readKeySet(settings: Pick<IdentitySettings, "jwks" | "jwksTokenFile" | "jwksCaFile">): Promise<JSONWebKeySet> {
  if (!/^https?:\/\//i.test(settings.jwks)) return JSON.parse(readFileSync(settings.jwks, "utf8"));
  const headers: Record<string, string> = { accept: "application/json" };
  if (settings.jwksTokenFile) headers.authorization = `Bearer ${readFileSync(settings.jwksTokenFile, "utf8").trim()}`;
  const tls = settings.jwksCaFile ? { ca: readFileSync(settings.jwksCaFile, "utf8") } : undefined;
  const response = await fetch(settings.jwks, { headers, tls, signal: AbortSignal.timeout(5000) } as RequestInit);
  if (!response.ok) throw new Error(`${settings.jwks} answered ${response.status}`);
  return (await response.json()) as JSONWebKeySet;
}

