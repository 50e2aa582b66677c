// accounts-billing's mail sender: works through the outbox (domain/mail-outbox.ts) over SMTP with
// nodemailer, off every request's path. For each mail it makes the one-time link at send time (so
// the outbox never holds a token) and sends plain text; a failure is tried again after the
// backoff. It wakes when a request queued mail in this process, when the earliest pending mail is
// due, and at least every few seconds (mail queued by another replica). Log lines name the mail's
// row, kind and user, never its link.
import nodemailer, { type Transporter } from "nodemailer";
import { eq } from "drizzle-orm";
import type { Db } from "./db/client.ts";
import { accounts, users } from "./db/schema.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { MailSettings } from "./mail-settings.ts";
import { passwordLinkAddress } from "../../kit/src/dashboard-links.ts";
import { createPasswordLink, LINK_LIFETIME_MS, RESET_LINK_LIFETIME_MS } from "./domain/sessions.ts";
import { nextDue, pruneMail, recordFailure, recordNotNeeded, recordSent, takeDueMail, type OutboxRow } from "./domain/mail-outbox.ts";
import { mailSends } from "../../kit/src/metrics.ts";
import { composeMail } from "./domain/mail-messages.ts";

/** The longest wait between two looks at the outbox. */
const IDLE_LOOK_MS = 5_000;
/** How often sent and given-up mail older than the outbox keeps it is deleted. */
const PRUNE_EVERY_MS = 3600_000;
const BATCH = 20;

export interface MailSender {
  /** A request queued mail: look now rather than at the next due time. */
  wake(): void;
  stop(): Promise<void>;
}

const nameOf = async (db: Db, userId: number | null) => (userId === null ? undefined : (await db.select({ name: users.name }).from(users).where(eq(users.id, userId)))[0]?.name);

/**
 * Why the mail need not go any more, if so: a disabled user is mailed no link, and an invitation
 * or sign-up whose user set a password meanwhile (through the inviter's copy of the link, say)
 * would only hand out a second way to set it.
 */
function notNeeded(kind: OutboxRow["kind"], user: typeof users.$inferSelect): string | undefined {
  if (user.disabledAt) return "the user is disabled";
  if (kind !== "password_reset" && user.passwordHash) return "the user set a password meanwhile";
  return undefined;
}

/** Sends the row's mail; the reason when it is no longer needed (nothing is sent then). */
async function sendOne(db: Db, transport: Transporter, settings: MailSettings, row: OutboxRow): Promise<string | undefined> {
  const [user] = await db.select().from(users).where(eq(users.id, row.userId));
  if (!user) throw new Error("the user is gone");
  const skip = notNeeded(row.kind, user);
  if (skip) return skip;
  const accountName = row.accountId === null ? undefined : (await db.select({ name: accounts.name }).from(accounts).where(eq(accounts.id, row.accountId)))[0]?.name;
  const link = await createPasswordLink(db, user.id, new Date(), row.kind === "password_reset" ? RESET_LINK_LIFETIME_MS : LINK_LIFETIME_MS);
  const { subject, text } = composeMail({
    kind: row.kind,
    name: user.name,
    accountName,
    inviterName: await nameOf(db, row.actorUserId),
    link: passwordLinkAddress(settings.linkBase, link.token),
    expiresAt: link.expiresAt,
  });
  await transport.sendMail({ from: settings.from, to: user.email, subject, text });
  return undefined;
}

export function startMailSender(db: Db, settings: MailSettings, logger: Logger): MailSender {
  // Timeouts bound a slow server: the row's lease (SEND_LEASE_MS) outlasts them.
  const transport = nodemailer.createTransport({ url: settings.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      clearTimeout(timer);
      wakeUp = undefined;
    });

  const pass = async () => {
    for (let rows = await takeDueMail(db, BATCH); rows.length; rows = stopped ? [] : await takeDueMail(db, BATCH)) {
      await Promise.all(
        rows.map(async (row) => {
          try {
            const skipped = await sendOne(db, transport, settings, row);
            if (skipped) {
              await recordNotNeeded(db, row.id, skipped);
              mailSends.inc({ kind: row.kind, outcome: "not_needed" });
              logger.info("mail not needed", { mail_id: row.id, kind: row.kind, user_id: row.userId, reason: skipped });
              return;
            }
            await recordSent(db, row.id);
            mailSends.inc({ kind: row.kind, outcome: "sent" });
            logger.info("mail sent", { mail_id: row.id, kind: row.kind, user_id: row.userId, attempt: row.attempts });
          } catch (error) {
            const outcome = await recordFailure(db, row, (error as Error).message, settings);
            mailSends.inc({ kind: row.kind, outcome: outcome === "retry" ? "retry" : "given_up" });
            logger.warn(outcome === "retry" ? "mail not sent, will try again" : "mail not sent, no attempts left", { mail_id: row.id, kind: row.kind, user_id: row.userId, attempt: row.attempts, reason: (error as Error).message });
          }
        }),
      );
    }
  };

  let prunedAt = 0;
  const loop = (async () => {
    while (!stopped) {
      try {
        await pass();
        if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
          prunedAt = Date.now();
          await pruneMail(db);
        }
        const due = await nextDue(db);
        const wait = due ? Math.max(20, Math.min(IDLE_LOOK_MS, due.getTime() - Date.now())) : IDLE_LOOK_MS;
        if (!stopped) await sleep(wait);
      } catch (error) {
        logger.warn("mail outbox not reachable", { reason: (error as Error).message });
        if (!stopped) await sleep(IDLE_LOOK_MS);
      }
    }
  })();

  return {
    wake: () => wakeUp?.(),
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
      transport.close();
    },
  };
}
