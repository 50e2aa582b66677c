// What each outgoing mail says: plain text only (no HTML, so nothing a tenant wrote, such as an
// account's or a user's name, can become markup), with the one-time link on a line of its own.
import type { MailKind } from "./mail-outbox.ts";

export interface MailContext {
  kind: MailKind;
  /** The recipient's name. */
  name: string;
  /** The account an invitation or sign-up is for. */
  accountName?: string;
  /** Who invited. */
  inviterName?: string;
  link: string;
  expiresAt: Date;
}

export interface MailText {
  subject: string;
  text: string;
}

// Names go on one line: a line break in a name must not shape the mail.
const oneLine = (value: string) => value.replace(/[\r\n\t]+/g, " ").trim();

const expiry = (at: Date) => at.toISOString().replace("T", " ").replace(/:\d\d\.\d+Z$/, " UTC");

export function composeMail(mail: MailContext): MailText {
  const greeting = `Hello ${oneLine(mail.name)},`;
  const works = `The link works once, until ${expiry(mail.expiresAt)}.`;
  switch (mail.kind) {
    case "invitation":
      return {
        subject: "You are invited to an account of the article service",
        text: [
          greeting,
          "",
          `${oneLine(mail.inviterName ?? "A member")} invited you to the account "${oneLine(mail.accountName ?? "")}". Set your password to sign in:`,
          "",
          mail.link,
          "",
          works,
        ].join("\n"),
      };
    case "password_reset":
      return {
        subject: "Set a new password",
        text: [
          greeting,
          "",
          "Someone asked to set a new password for your sign-in. If it was you, set it here:",
          "",
          mail.link,
          "",
          `${works} Setting a password signs you out everywhere else. If you did not ask, ignore this mail: your password stays as it is.`,
        ].join("\n"),
      };
    case "sign_up":
      return {
        subject: "Confirm your address",
        text: [
          greeting,
          "",
          `Your account "${oneLine(mail.accountName ?? "")}" is ready. Confirm this address and set your password:`,
          "",
          mail.link,
          "",
          `${works} If you did not sign up, ignore this mail.`,
        ].join("\n"),
      };
  }
}
