// Signing secrets and frozen messages in webhook-dispatcher's own schema, on a real Postgres
// (a throwaway database, migrated the way the service migrates at start).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase, type ServiceDatabase } from "../../services/kit/src/db.ts";
import { schema } from "../../services/webhook-dispatcher/src/db/client.ts";
import { frozenMessage } from "../../services/webhook-dispatcher/src/domain/messages.ts";
import {
  removeSigningSecret,
  setSigningSecret,
  signingSecretCreatedAt,
  signingSecretOf,
} from "../../services/webhook-dispatcher/src/domain/signing-secrets.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `webhook_unit_${process.pid}_${randomBytes(3).toString("hex")}`;
const key = randomBytes(32);
let database: ServiceDatabase<typeof schema>;

beforeAll(async () => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  database = await openServiceDatabase({
    databaseUrl: url.toString(),
    schemaName: "webhook_dispatcher",
    schema,
    migrationsFolder: fileURLToPath(new URL("../../services/webhook-dispatcher/src/db/migrations", import.meta.url)),
    poolSize: 2,
  });
});

afterAll(async () => {
  await database?.close();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

describe("signing secrets", () => {
  test("a project without a secret signs nothing", async () => {
    expect(await signingSecretOf(database.db, key, 1)).toBeUndefined();
    expect(await signingSecretCreatedAt(database.db, 1)).toBeUndefined();
  });

  test("a set secret is stored encrypted and opens for signing", async () => {
    const { secret, createdAt } = await setSigningSecret(database.db, key, 2);
    expect(secret).toMatch(/^whsec_/);
    expect(await signingSecretOf(database.db, key, 2)).toBe(secret);
    expect((await signingSecretCreatedAt(database.db, 2))?.getTime()).toBe(createdAt.getTime());

    const rows = await database.sql`select * from webhook_dispatcher.signing_secrets where project_id = 2`;
    expect(JSON.stringify(rows)).not.toContain(secret.slice(6));
  });

  test("setting again replaces the secret", async () => {
    const first = await setSigningSecret(database.db, key, 3);
    const second = await setSigningSecret(database.db, key, 3);
    expect(second.secret).not.toBe(first.secret);
    expect(await signingSecretOf(database.db, key, 3)).toBe(second.secret);
  });

  test("removing stops signing; removing again reports nothing removed", async () => {
    await setSigningSecret(database.db, key, 4);
    expect(await removeSigningSecret(database.db, 4)).toBe(true);
    expect(await signingSecretOf(database.db, key, 4)).toBeUndefined();
    expect(await removeSigningSecret(database.db, 4)).toBe(false);
  });

  test("a row copied onto another project, or read under another key, refuses to open", async () => {
    await setSigningSecret(database.db, key, 5);
    await database.sql`insert into webhook_dispatcher.signing_secrets (project_id, nonce, ciphertext)
      select 6, nonce, ciphertext from webhook_dispatcher.signing_secrets where project_id = 5`;
    await expect(signingSecretOf(database.db, key, 6)).rejects.toThrow("cannot be decrypted");
    await expect(signingSecretOf(database.db, randomBytes(32), 5)).rejects.toThrow("cannot be decrypted");
  });
});

describe("frozen messages", () => {
  const message = (body: string) => ({ id: "msg_e1_1", externalId: "e1", versionId: 1, projectId: 2, url: "https://hooks.example.com/a", body });

  test("the first composition is kept; later attempts get it back unchanged", async () => {
    let composed = 0;
    const first = await frozenMessage(database.db, "msg_e1_1", async () => (composed++, message('{"n":1}')));
    const again = await frozenMessage(database.db, "msg_e1_1", async () => (composed++, message('{"n":2}')));
    expect(first.body).toBe('{"n":1}');
    expect(again.body).toBe('{"n":1}');
    expect(composed).toBe(1);
  });

  test("two workers composing at once both send the one stored copy", async () => {
    const compose = (n: number) => async () => ({ ...message(`{"n":${n}}`), id: "msg_e2_1", externalId: "e2" });
    const [a, b] = await Promise.all([frozenMessage(database.db, "msg_e2_1", compose(1)), frozenMessage(database.db, "msg_e2_1", compose(2))]);
    expect(a.body).toBe(b.body);
  });
});
