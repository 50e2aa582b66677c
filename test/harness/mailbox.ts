// A real SMTP server (npm's smtp-server) for the stacks' mail, on a free port of this machine:
// it takes every message after a login, keeps it, and lets tests find a recipient's mail and the
// one-time link in it. refuse() makes it answer a recipient's next messages with a temporary
// failure (451), as a busy server does, so retries can be shown.
import { SMTPServer } from "smtp-server";
import { eventually } from "./eventually.ts";
import { freePort } from "./ports.ts";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The body as text (quoted-printable decoded). */
  text: string;
}

export const MAILBOX_USER = "stack";
export const MAILBOX_PASSWORD = "mailbox-password";

/** Undoes quoted-printable: soft line breaks and =XX bytes. */
function fromQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return new TextDecoder().decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0)));
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ");
  const header = (name: string) => head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))?.slice(name.length + 1).trim() ?? "";
  const body = raw.slice(split + 4);
  const encoding = header("Content-Transfer-Encoding").toLowerCase();
  const text = encoding === "quoted-printable" ? fromQuotedPrintable(body) : encoding === "base64" ? Buffer.from(body, "base64").toString("utf8") : body;
  return { from, to, subject: header("Subject"), text: text.replace(/\r\n/g, "\n") };
}

export class Mailbox {
  readonly mails: ReceivedMail[] = [];
  private readonly refusals = new Map<string, number>();

  constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  /** The SMTP_URL a stack sends through. */
  get url(): string {
    return `smtp://${MAILBOX_USER}:${MAILBOX_PASSWORD}@127.0.0.1:${this.port}`;
  }

  /** The next `times` messages to the address are refused with 451 (try again later). */
  refuse(address: string, times: number): void {
    this.refusals.set(address.toLowerCase(), times);
  }

  /** Messages refused so far, by address. */
  readonly refused = new Map<string, number>();

  /** Takes one refusal of the address, if any is left. */
  refusing(address: string): boolean {
    const key = address.toLowerCase();
    const left = this.refusals.get(key) ?? 0;
    if (left > 0) {
      this.refusals.set(key, left - 1);
      this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
    }
    return left > 0;
  }

  /** Mails to the address so far. */
  to(address: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** Waits for the address's `count`-th mail (the first by default) and returns it. */
  async waitFor(address: string, count = 1, timeoutMs = 15_000): Promise<ReceivedMail> {
    const mails = await eventually(async () => this.to(address), (m) => m.length >= count, timeoutMs, `mail number ${count} to ${address}`);
    return mails[count - 1]!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The one-time link's token in a mail's text (the dashboard's #/set-password/<token> address). */
export function linkTokenIn(mail: ReceivedMail): string {
  const match = /\/dashboard\/#\/set-password\/([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!match) throw new Error(`no one-time link in the mail "${mail.subject}"`);
  return match[1]!;
}

export async function startMailbox(): Promise<Mailbox> {
  let mailbox: Mailbox | undefined;
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS offered, so the login may go without TLS.
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === MAILBOX_USER && auth.password === MAILBOX_PASSWORD) callback(null, { user: auth.username });
      else callback(new Error("Invalid username or password"));
    },
    onRcptTo(address, _session, callback) {
      if (mailbox?.refusing(address.address)) {
        const busy = Object.assign(new Error("Mailbox busy, try again later"), { responseCode: 451 });
        callback(busy);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        mailbox?.mails.push(parse(Buffer.concat(chunks).toString("latin1"), from, session.envelope.rcptTo.map((r) => r.address.toLowerCase())));
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  mailbox = new Mailbox(server, port);
  return mailbox;
}
