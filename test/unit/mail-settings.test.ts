// accounts-billing's mail settings (services/accounts-billing/src/mail-settings.ts): off without
// SMTP_URL, MAIL_FROM required with it, links to PUBLIC_BASE_URL; and what a mail says
// (domain/mail-messages.ts): plain text, the link on its own line, names on one line.
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../services/kit/src/config.ts";
import { loadMailSettings } from "../../services/accounts-billing/src/mail-settings.ts";
import { composeMail } from "../../services/accounts-billing/src/domain/mail-messages.ts";

describe("mail settings", () => {
  test("without SMTP_URL nothing is mailed; MAIL_FROM alone is a mistake named as such", () => {
    expect(loadMailSettings({})).toBeUndefined();
    expect(() => loadMailSettings({ MAIL_FROM: "a@example.com" })).toThrow(/MAIL_FROM/);
  });

  test("SMTP_URL needs MAIL_FROM, an smtp:// or smtps:// address, and the settings' defaults apply", () => {
    expect(() => loadMailSettings({ SMTP_URL: "smtp://u:p@mail.example.com:587" })).toThrow(ConfigError);
    expect(() => loadMailSettings({ SMTP_URL: "http://mail.example.com", MAIL_FROM: "a@example.com" })).toThrow(/SMTP_URL/);
    expect(() => loadMailSettings({ SMTP_URL: "smtp://mail.example.com", MAIL_FROM: "nobody" })).toThrow(/MAIL_FROM/);
    const settings = loadMailSettings({ SMTP_URL: "smtps://u:p@mail.example.com:465", MAIL_FROM: "Articles <no-reply@example.com>", PORT: "9000" })!;
    expect(settings).toMatchObject({ from: "Articles <no-reply@example.com>", linkBase: "http://127.0.0.1:9000", attempts: 8, backoffMs: [10_000, 60_000, 300_000, 1_800_000, 3_600_000] });
  });

  test("links lead to PUBLIC_BASE_URL, which carries no query or fragment", () => {
    const env = { SMTP_URL: "smtp://mail.example.com", MAIL_FROM: "a@example.com" };
    expect(loadMailSettings({ ...env, PUBLIC_BASE_URL: "https://articles.example.com/app/" })!.linkBase).toBe("https://articles.example.com/app");
    expect(() => loadMailSettings({ ...env, PUBLIC_BASE_URL: "https://articles.example.com/?x=1" })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadMailSettings({ ...env, MAIL_BACKOFF_MS: "soon" })).toThrow(/MAIL_BACKOFF_MS/);
  });
});

test("a mail is plain text with its link on a line of its own, and a name's line breaks do not shape it", () => {
  const link = "https://articles.example.com/dashboard/#/set-password/abc";
  const mail = composeMail({ kind: "invitation", name: "Ivy\r\nBcc: x@example.com", accountName: "Acme\nCorp", inviterName: "Olga", link, expiresAt: new Date("2030-01-02T03:04:05Z") });
  expect(mail.text.split("\n")).toContain(link);
  expect(mail.text).toContain("Hello Ivy Bcc: x@example.com,");
  expect(mail.text).toContain(`Olga invited you to the account "Acme Corp"`);
  expect(mail.text).toContain("until 2030-01-02 03:04 UTC");
  expect(composeMail({ kind: "password_reset", name: "Ivy", link, expiresAt: new Date() }).subject).toBe("Set a new password");
  expect(composeMail({ kind: "sign_up", name: "Ivy", accountName: "Mine", link, expiresAt: new Date() }).text).toContain(`"Mine" is ready`);
});
