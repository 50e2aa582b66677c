// Mail from the dashboard, through a real SMTP server (npm's smtp-server, test/harness/mailbox.ts)
// that the shared stack sends to: an invitation is mailed with a link of its own that sets the
// password (and ends the inviter's copy); a mail the server refuses goes again, unless the
// invitee set a password meanwhile; "forgot password"
// answers the same for any address, mails a known one a link that works once and ends the user's
// other sessions, and is rate-limited; self-serve sign-up is 404 without SIGNUP_PLAN and, on a
// gateway that names a plan, makes a user and an account on it, verified by the mailed link.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { DashboardClient, linkTokenFor } from "../harness/dashboard.ts";
import { linkTokenIn, type Mailbox } from "../harness/mailbox.ts";
import { startOwnGateway, type OwnGateway } from "../harness/own-gateway.ts";
import { eventually } from "../harness/eventually.ts";
import postgres from "postgres";

let stack: TestStack;
let mailbox: Mailbox;
let tenant: Tenant;
let owner: DashboardClient;
const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a wholly new passphrase";
const address = (who: string) => `${who}-${randomBytes(5).toString("hex")}@example.com`;

beforeAll(async () => {
  stack = await useStack();
  mailbox = stack.mailbox!;
  tenant = await createTenant(stack);
  owner = new DashboardClient(stack.baseUrl);
  expect((await owner.setPassword(await linkTokenFor(stack, tenant.userId), PASSWORD)).status).toBe(200);
});

test("an invitation is mailed with a link of its own; using it signs the invitee in and ends the inviter's copy", async () => {
  const email = address("invitee");
  const invited = await owner.post("/members", { email, name: "Ivy Invitee", role: "editor" });
  expect(invited.status).toBe(201);
  expect(invited.body.data).toMatchObject({ mailed: true, has_password: false });
  const shown = /#\/set-password\/(.+)$/.exec(invited.body.data.sign_in_link)![1]!;
  const mail = await mailbox.waitFor(email);
  expect(mail.subject).toBe("You are invited to an account of the article service");
  expect(mail.from).toBe("no-reply@example.test");
  expect(mail.text).toContain("Hello Ivy Invitee,");
  expect(mail.text).toContain(`${stack.baseUrl}/dashboard/#/set-password/`);
  const mailed = linkTokenIn(mail);
  expect(mailed).not.toBe(shown);
  const invitee = new DashboardClient(stack.baseUrl);
  expect((await invitee.setPassword(mailed, PASSWORD)).status).toBe(200);
  const session = await invitee.get("/session");
  expect(session.body.data.user.email).toBe(email);
  expect(session.body.data.user.email_verified_at).not.toBeNull();
  expect(session.body.data.current_account.id).toBe(tenant.accountId);
  // The inviter's copy cannot set the password again.
  expect((await new DashboardClient(stack.baseUrl).setPassword(shown, "an inviter's choice")).status).toBe(401);
});

test("a mail the SMTP server refuses for a while goes again after the backoff", async () => {
  const email = address("busy");
  mailbox.refuse(email, 2);
  expect((await owner.post("/members", { email, role: "viewer" })).status).toBe(201);
  const mail = await mailbox.waitFor(email);
  expect(linkTokenIn(mail)).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  expect(mailbox.to(email)).toHaveLength(1);
});

test("an invitation mail not sent before the invitee set a password through the inviter's copy is not sent at all", async () => {
  const email = address("quick");
  mailbox.refuse(email, 1000);
  const invited = await owner.post("/members", { email, role: "viewer" });
  expect(invited.status).toBe(201);
  await eventually(async () => mailbox.refused.get(email) ?? 0, (n) => n >= 1, 10_000, "a first refused attempt");
  const shown = /#\/set-password\/(.+)$/.exec(invited.body.data.sign_in_link)![1]!;
  expect((await new DashboardClient(stack.baseUrl).setPassword(shown, PASSWORD)).status).toBe(200);
  const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await eventually(
      () => sql`select o.failed_at, o.last_error from accounts_billing.mail_outbox o join accounts_billing.users u on u.id = o.user_id where u.email = ${email}`,
      (rows) => rows[0]?.failed_at != null,
      10_000,
      "the invitation given up as not needed",
    );
    expect(row!.last_error).toBe("not needed: the user set a password meanwhile");
  } finally {
    await sql.end();
  }
  expect(mailbox.to(email)).toEqual([]);
});

test("forgot password: the same answer for any address; the mailed link works once and ends the user's other sessions", async () => {
  const t = await createTenant(stack);
  const first = new DashboardClient(stack.baseUrl);
  expect((await first.setPassword(await linkTokenFor(stack, t.userId), PASSWORD)).status).toBe(200);
  const second = new DashboardClient(stack.baseUrl);
  expect((await second.signIn(t.email, PASSWORD)).status).toBe(200);

  const stranger = address("nobody");
  const visitor = new DashboardClient(stack.baseUrl);
  const unknown = await visitor.post("/forgot-password", { email: stranger });
  const known = await visitor.post("/forgot-password", { email: t.email.toUpperCase() });
  expect(unknown.status).toBe(202);
  expect(known.status).toBe(202);
  expect(known.body).toEqual(unknown.body);
  expect(visitor.cookie).toBeUndefined();

  const mail = await mailbox.waitFor(t.email);
  expect(mail.subject).toBe("Set a new password");
  const token = linkTokenIn(mail);
  // The unknown address was asked first: had anything been mailed to it, it would be there by now.
  expect(mailbox.to(stranger)).toEqual([]);

  const reset = new DashboardClient(stack.baseUrl);
  expect((await reset.setPassword(token, NEW_PASSWORD)).status).toBe(200);
  expect(await first.refresh()).toBe(401);
  expect(await second.refresh()).toBe(401);
  expect(await reset.refresh()).toBe(200);
  const again = await new DashboardClient(stack.baseUrl).setPassword(token, "someone else's try");
  expect(again.status).toBe(401);
  expect((await new DashboardClient(stack.baseUrl).signIn(t.email, PASSWORD)).status).toBe(401);
  expect((await new DashboardClient(stack.baseUrl).signIn(t.email, NEW_PASSWORD)).status).toBe(200);
});

test("forgot password is counted per address: past the limit it answers 429 with Retry-After", async () => {
  const email = address("often");
  const client = new DashboardClient(stack.baseUrl);
  for (let i = 0; i < 5; i++) expect((await client.post("/forgot-password", { email })).status).toBe(202);
  const refused = await client.post("/forgot-password", { email });
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  // A request from another site is refused before anything is counted or sent.
  expect((await client.post("/forgot-password", { email: tenant.email }, { origin: "https://elsewhere.example" })).status).toBe(403);
  expect((await client.post("/forgot-password", {})).status).toBe(422);
  // A NUL byte is refused as a bad field, never reaching the database.
  expect((await new DashboardClient(stack.baseUrl).post("/forgot-password", { email: "nul\u0000@example.com" })).status).toBe(422);
});

test("a disabled user is mailed no link", async () => {
  const t = await createTenant(stack);
  await operatorClient(stack).disableUser({ userId: BigInt(t.userId) });
  expect((await new DashboardClient(stack.baseUrl).post("/forgot-password", { email: t.email })).status).toBe(202);
  // A mail asked for after it goes out only once the disabled user's would have gone.
  const witness = await createTenant(stack);
  await new DashboardClient(stack.baseUrl).post("/forgot-password", { email: witness.email });
  await mailbox.waitFor(witness.email);
  expect(mailbox.to(t.email)).toEqual([]);
});

test("sign-up is not there without SIGNUP_PLAN: the page's check and the endpoint answer 404", async () => {
  const client = new DashboardClient(stack.baseUrl);
  expect((await client.get("/sign-up")).status).toBe(404);
  const posted = await client.post("/sign-up", { email: address("hopeful"), name: "Hopeful" });
  expect(posted.status).toBe(404);
  expect(posted.body.message).toBe("Not found.");
});

let own: OwnGateway | undefined;
afterAll(async () => {
  await own?.stop();
});

test("with SIGNUP_PLAN, sign-up makes a user and an account on that plan; the mailed link verifies the address", async () => {
  const planName = `Self-serve ${randomBytes(4).toString("hex")}`;
  const { plan } = await operatorClient(stack).createPlan({ name: planName, monthlyWords: 5000n, requestsPerMinute: 10, requestsPerHour: 100, requestsPerDay: 1000 });
  own = await startOwnGateway(stack, { SIGNUP_PLAN: planName });
  const visitor = new DashboardClient(own.baseUrl);
  expect((await visitor.get("/sign-up")).status).toBe(200);
  const email = address("newcomer");
  const made = await visitor.post("/sign-up", { email, name: "Nia Newcomer", account_name: "Nia's articles" });
  expect(made.status).toBe(202);
  // The same address again: the same answer, nothing more made or mailed.
  const twice = await visitor.post("/sign-up", { email, name: "Someone Else" });
  expect(twice.status).toBe(202);
  expect(twice.body).toEqual(made.body);
  const noName = await visitor.post("/sign-up", { email: address("nameless"), name: "" });
  expect(noName.status).toBe(422);
  expect(Object.keys(noName.body.errors)).toEqual(["name"]);
  const badAddress = await visitor.post("/sign-up", { email: "not an address", name: "Nobody" });
  expect(badAddress.status).toBe(422);
  expect(Object.keys(badAddress.body.errors)).toEqual(["email"]);

  const mail = await mailbox.waitFor(email);
  expect(mail.subject).toBe("Confirm your address");
  expect(mail.text).toContain(`"Nia's articles"`);
  // Not verified, and no password, until the link is used.
  expect((await new DashboardClient(own.baseUrl).signIn(email, PASSWORD)).status).toBe(401);
  const user = new DashboardClient(own.baseUrl);
  expect((await user.setPassword(linkTokenIn(mail), PASSWORD)).status).toBe(200);
  const session = (await user.get("/session")).body.data;
  expect(session.user).toMatchObject({ email, name: "Nia Newcomer" });
  expect(Date.parse(session.user.email_verified_at)).toBeGreaterThan(Date.now() - 60_000);
  expect(session.accounts).toEqual([{ id: session.current_account.id, name: "Nia's articles", role: "owner" }]);
  const usage = (await user.get("/usage")).body.data;
  expect(JSON.stringify(usage)).toContain("5000");
  expect((await user.get("/projects")).body.data).toHaveLength(1);
  expect(mailbox.to(email)).toHaveLength(1);
  expect(plan!.id).toBeGreaterThan(0n);

  // Sign-ups are counted per address: the third request for one address is the last let in.
  const crowded = address("crowded");
  for (let i = 0; i < 3; i++) expect((await visitor.post("/sign-up", { email: crowded, name: "Crowd" })).status).toBe(202);
  expect((await visitor.post("/sign-up", { email: crowded, name: "Crowd" })).status).toBe(429);
});
