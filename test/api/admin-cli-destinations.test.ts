// The operator CLI's publishing commands against the running stack: a destination added with its
// credential on standard input (never a flag), listed, checked and removed, the credential
// appearing in none of the CLI's output; an article publish the dispatcher refuses; and usage
// mistakes refused before any call. No WordPress is needed: the site is a port nobody listens on
// (the test stack allows loopback addresses), so the check answers ok false with its problem.
import { beforeAll, describe, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { runAdmin, type AdminResult } from "../harness/admin-cli.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const SITE_URL = "http://127.0.0.1:9/";

let stack: TestStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
});

const admin = (...args: string[]) => runAdmin(stack, ...args);

/** runAdmin with `input` on the CLI's standard input (the harness's runner gives it none) and extra environment. */
async function adminWithInput(input: string, env: Record<string, string>, ...args: string[]): Promise<AdminResult> {
  const child = Bun.spawn([process.execPath, "deploy/admin/cli.ts", ...args], {
    cwd: root,
    env: { ...stack.env, OPERATOR_TOKEN_FILE: stack.operatorTokenFile, LOG_LEVEL: "silent", ...env },
    stdin: new Blob([input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  let json: any;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

const project = () => String(tenant.projectId);

describe("a destination's life: add, list, check, remove", () => {
  const credential = `cli-app-password-${randomBytes(8).toString("hex")}`;
  const everything: AdminResult[] = [];
  let destinationId: number;

  test("add reads the credential from standard input (its first line) and prints the destination without it", async () => {
    const added = await adminWithInput(
      `  ${credential}  \nsecond line, not read\n`,
      {},
      ...["destination", "add", "--project", project(), "--kind", "wordpress", "--name", "Company blog", "--site-url", SITE_URL],
      ...["--username", "editor", "--default-status", "publish", "--categories", "News, Product updates", "--tags", "launch", "--author-id", "7"],
    );
    everything.push(added);
    // The site was asked first; nothing listens there, so the destination comes with a warning.
    expect(added.code).toBe(0);
    expect(added.stderr).toMatch(/^destination added with a warning: .*could not be reached/);
    expect(added.json).toEqual({
      id: expect.any(Number),
      project_id: tenant.projectId,
      kind: "wordpress",
      name: "Company blog",
      site_url: SITE_URL,
      username: "editor",
      default_status: "publish",
      default_categories: ["News", "Product updates"],
      default_tags: ["launch"],
      author_id: 7,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      warnings: [expect.stringContaining("could not be reached")],
    });
    destinationId = added.json.id;
  }, 30_000);

  test("list shows it, never its credential", async () => {
    const listed = await admin("destination", "list", "--project", project());
    everything.push(listed);
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual([expect.objectContaining({ id: destinationId, name: "Company blog", site_url: SITE_URL })]);
    expect(Object.keys(listed.json[0])).not.toContain("credential");
  }, 30_000);

  test("check answers ok false with a problem sentence (nothing listens at the site), exit 0 and a plain line on stderr", async () => {
    const checked = await admin("destination", "check", "--project", project(), "--destination", String(destinationId));
    everything.push(checked);
    expect(checked.code).toBe(0);
    expect(checked.json).toEqual({
      project_id: tenant.projectId,
      destination_id: destinationId,
      ok: false,
      problems: [expect.stringMatching(/^[A-Z].+[.)]$/)],
      user_name: null,
      can_create_posts: false,
      can_publish_posts: false,
      can_upload_media: false,
    });
    expect(checked.stderr).toBe(`destination ${destinationId}: the check failed; nothing can be published there until its problems are fixed\n`);
  }, 60_000);

  test("article publish of an article the project does not have is the dispatcher's NOT_FOUND, one JSON line on stderr", async () => {
    const published = await admin("article", "publish", "--project", project(), "--article", randomUUID(), "--destination", String(destinationId), "--tags", "");
    everything.push(published);
    expect({ code: published.code, stdout: published.stdout }).toEqual({ code: 1, stdout: "" });
    expect(published.stderr.trimEnd().split("\n")).toHaveLength(1);
    // article-store's own NOT_FOUND, passed on by the dispatcher.
    expect(JSON.parse(published.stderr)).toEqual({ error: expect.stringMatching(/article/i), code: Code.NotFound });
  }, 30_000);

  test("remove deletes it; removing it again says removed false", async () => {
    const removed = await admin("destination", "remove", "--project", project(), "--destination", String(destinationId));
    everything.push(removed);
    expect({ code: removed.code, json: removed.json }).toEqual({ code: 0, json: { project_id: tenant.projectId, destination_id: destinationId, removed: true } });
    const again = await admin("destination", "remove", "--project", project(), "--destination", String(destinationId));
    expect({ code: again.code, json: again.json }).toEqual({ code: 0, json: { project_id: tenant.projectId, destination_id: destinationId, removed: false } });
    const listed = await admin("destination", "list", "--project", project());
    expect({ code: listed.code, json: listed.json }).toEqual({ code: 0, json: [] });
  }, 30_000);

  test("the credential appeared in no command's stdout or stderr", () => {
    expect(everything).toHaveLength(5);
    for (const res of everything) expect(`${res.stdout}\n${res.stderr}`).not.toContain(credential);
  });
});

describe("where the credential comes from", () => {
  const addArgs = () => ["destination", "add", "--project", project(), "--kind", "wordpress", "--name", "From the environment", "--site-url", SITE_URL, "--username", "editor"];

  test("DESTINATION_CREDENTIAL when set (standard input is then not read)", async () => {
    const credential = `env-secret-${randomBytes(8).toString("hex")}`;
    const added = await adminWithInput("", { DESTINATION_CREDENTIAL: credential }, ...addArgs());
    expect(added.code).toBe(0);
    expect(added.json).toMatchObject({ name: "From the environment", kind: "wordpress" });
    expect(`${added.stdout}${added.stderr}`).not.toContain(credential);
    const removed = await admin("destination", "remove", "--project", project(), "--destination", String(added.json.id));
    expect(removed.json.removed).toBe(true);
  }, 30_000);

  test("with neither, the service refuses the empty credential, naming the field", async () => {
    const refused = await adminWithInput("", {}, ...addArgs());
    expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: "" });
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: Code.InvalidArgument, errors: { credential: [expect.stringContaining("application password")] } });
  }, 30_000);
});

describe("usage mistakes: the message and the command's usage line, exit 2, nothing on stdout", () => {
  const usageLine = (usage: string) => `usage: npm run admin -- ${usage}`;

  test("a missing --project", async () => {
    const res = await admin("destination", "list");
    expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 2, stdout: "" });
    expect(res.stderr.trimEnd().split("\n")).toEqual(["destination list: --project is required", usageLine("destination list --project ID")]);
  }, 30_000);

  test("an unknown flag: --password does not exist (a credential is never a flag), and nothing is added", async () => {
    const res = await adminWithInput(
      "a-password-given-twice\n",
      {},
      ...["destination", "add", "--project", project(), "--kind", "wordpress", "--name", "Blog", "--site-url", SITE_URL, "--username", "editor", "--password", "hunter2"],
    );
    expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 2, stdout: "" });
    const [message, usage] = res.stderr.trimEnd().split("\n");
    expect(message).toBe("destination add: unknown flag --password");
    expect(usage).toStartWith(usageLine("destination add --project ID --kind wordpress|ghost"));
    const listed = await admin("destination", "list", "--project", project());
    expect(listed.json).toEqual([]);
  }, 30_000);

  test("a kind the dispatcher has no publisher for, before the credential is asked for", async () => {
    const res = await adminWithInput("secret\n", {}, "destination", "add", "--project", project(), "--kind", "medium", "--name", "Blog", "--site-url", SITE_URL);
    expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 2, stdout: "" });
    expect(res.stderr.split("\n")[0]).toBe('destination add: --kind must be wordpress or ghost, got "medium"');
  }, 30_000);
});
