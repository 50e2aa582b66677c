// What `npm start` keeps for this machine in .local/ (readable by this user only), made on first
// use: the launcher's identity keys and tokens (the operator CLI reads the operator's token from
// there), and the key webhook signing secrets are stored under. Deployments get both from their
// platform instead (projected ServiceAccount tokens, a Secret).
import { hkdfSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const LOCAL = fileURLToPath(new URL("../../.local/", import.meta.url));

/** Where npm start keeps its identity keys and each process's token (workload-tokens.ts). */
export const LOCAL_IDENTITY_DIR = `${LOCAL}identity`;

/** The operator's token as npm start writes it: the operator CLI's default credential. */
export const LOCAL_OPERATOR_TOKEN_FILE = `${LOCAL_IDENTITY_DIR}/tokens/operator.jwt`;

/**
 * This machine's WEBHOOK_SECRET_KEY. A checkout that ran an earlier version kept a shared service
 * token instead and derived the key from it; that key is kept, so stored signing secrets still open.
 */
export function localWebhookSecretKey(): string {
  const file = `${LOCAL}webhook-secret-key`;
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(LOCAL, { recursive: true });
  const legacy = `${LOCAL}service-token`;
  const key = existsSync(legacy)
    ? Buffer.from(hkdfSync("sha256", readFileSync(legacy, "utf8").trim(), "articles.webhook-dispatcher", "signing-secret-encryption-key", 32))
    : randomBytes(32);
  try {
    writeFileSync(file, key.toString("base64") + "\n", { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another launcher made it first: its key is the one.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readFileSync(file, "utf8").trim();
}
