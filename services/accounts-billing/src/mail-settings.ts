// accounts-billing's mail settings, read at start: only this service reads them (the SMTP URL
// carries the server's password, so it reaches no other process).
import { ConfigError, envInt, envIntList, envOptional, envUrl, type Env } from "../../kit/src/config.ts";

/** Outgoing mail (accounts-billing): invitations, password resets and sign-up confirmations. */
export interface MailSettings {
  /** SMTP_URL: smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start), user and password in the URL. */
  smtpUrl: string;
  /** MAIL_FROM: the sender address every mail carries. */
  from: string;
  /** PUBLIC_BASE_URL: the gateway's public address the mailed links lead to (never a request's Host, which a caller sets). */
  linkBase: string;
  /** MAIL_ATTEMPTS: sends tried in all for one mail. */
  attempts: number;
  /** MAIL_BACKOFF_MS: wait before attempt k+1 is the k-th value (the last repeats). */
  backoffMs: number[];
}

/** The mail settings, or undefined when SMTP_URL is unset (nothing is mailed). MAIL_FROM is required with it. */
export function loadMailSettings(env: Env = process.env): MailSettings | undefined {
  const smtp = envOptional(env, "SMTP_URL");
  if (smtp === undefined) {
    if (envOptional(env, "MAIL_FROM") !== undefined) throw new ConfigError("MAIL_FROM", "is set without SMTP_URL; set both or neither");
    return undefined;
  }
  const smtpUrl = envUrl(env, "SMTP_URL", smtp, ["smtp:", "smtps:"]);
  const from = envOptional(env, "MAIL_FROM");
  if (!from || !/^([^<>\r\n]*<)?[^@\s<>]+@[^@\s<>]+(>)?$/.test(from.trim())) throw new ConfigError("MAIL_FROM", "required with SMTP_URL: an address such as Articles <no-reply@example.com>");
  const linkBase = envUrl(env, "PUBLIC_BASE_URL", `http://127.0.0.1:${envOptional(env, "PORT") ?? 8080}`, ["http:", "https:"]).replace(/\/$/, "");
  if (/[?#]/.test(linkBase)) throw new ConfigError("PUBLIC_BASE_URL", "must not carry a query or fragment");
  const backoffMs = envIntList(env, "MAIL_BACKOFF_MS", [10_000, 60_000, 300_000, 1_800_000, 3_600_000]);
  return { smtpUrl, from: from.trim(), linkBase, attempts: envInt(env, "MAIL_ATTEMPTS", 8, { min: 1, max: 100 }), backoffMs };
}
