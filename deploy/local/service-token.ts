// On one machine, `npm start` and the operator CLI share the internal service credential through
// a file only this user can read, created on first use. Deployments set SERVICE_TOKEN instead.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const FILE = fileURLToPath(new URL("../../.local/service-token", import.meta.url));

export function localServiceToken(): string {
  if (existsSync(FILE)) return readFileSync(FILE, "utf8").trim();
  mkdirSync(fileURLToPath(new URL("../../.local/", import.meta.url)), { recursive: true });
  const token = randomBytes(24).toString("base64url");
  writeFileSync(FILE, token + "\n", { mode: 0o600 });
  return token;
}
