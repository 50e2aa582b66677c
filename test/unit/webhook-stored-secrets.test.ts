// Signing secrets and frozen messages in webhook-dispatcher's own schema, on a real Postgres
// (a throwaway database, migrated the way the service migrates at start).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { openScratchDatabase, type ScratchDatabase } from "../harness/scratch-database.ts";
import { schema } from "../../services/webhook-dispatcher/src/db/client.ts";
import { FrozenMessages } from "../../services/webhook-dispatcher/src/domain/messages.ts";
import {
  removeSigningSecret,
  SECRET_MEMORY_MS,
  setSigningSecret,
  signingSecretCreatedAt,
  signingSecretOf,
} from "../../services/webhook-dispatcher/src/domain/signing-secrets.ts";

const key = randomBytes(32);
let database: ScratchDatabase<typeof schema>;

beforeAll(async () => {
  database = await openScratchDatabase("webhook_unit", { schemaName: "webhook_dispatcher", schema, migrationsFolder: new URL("../../services/webhook-dispatcher/src/db/migrations", import.meta.url), poolSize: 2 });
});

afterAll(() => database?.drop());

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

  test("deliveries read a project's sealed row once per short memory; this process's changes show at once", async () => {
    expect(SECRET_MEMORY_MS).toBeLessThanOrEqual(1000);
    const { secret } = await setSigningSecret(database.db, key, 7);
    expect(await Promise.all([signingSecretOf(database.db, key, 7), signingSecretOf(database.db, key, 7)])).toEqual([secret, secret]);

    // A change from elsewhere (another replica) shows once the memory lapses.
    await database.sql`delete from webhook_dispatcher.signing_secrets where project_id = 7`;
    expect(await signingSecretOf(database.db, key, 7)).toBe(secret);
    await Bun.sleep(SECRET_MEMORY_MS + 20);
    expect(await signingSecretOf(database.db, key, 7)).toBeUndefined();

    // This process's own changes are not hidden by the memory.
    const replaced = await setSigningSecret(database.db, key, 7);
    expect(await signingSecretOf(database.db, key, 7)).toBe(replaced.secret);
    await removeSigningSecret(database.db, 7);
    expect(await signingSecretOf(database.db, key, 7)).toBeUndefined();
  });

  test("a read that overlaps a change is not remembered", async () => {
    const first = await setSigningSecret(database.db, key, 8);
    const overlapping = signingSecretOf(database.db, key, 8);
    const second = await setSigningSecret(database.db, key, 8);
    expect([first.secret, second.secret]).toContain((await overlapping)!);
    expect(await signingSecretOf(database.db, key, 8)).toBe(second.secret);
  });
});

describe("frozen messages", () => {
  const message = (id: string, body: string) => ({ id, externalId: id.split("_")[1]!, versionId: 1, projectId: 2, url: "https://hooks.example.com/a", body });

  test("the first composition is kept; later attempts get it back unchanged", async () => {
    const messages = new FrozenMessages(database.db);
    let composed = 0;
    const first = await messages.frozen("msg_e1_1", async () => (composed++, message("msg_e1_1", '{"n":1}')));
    const again = await messages.frozen("msg_e1_1", async () => (composed++, message("msg_e1_1", '{"n":2}')));
    expect(first.body).toBe('{"n":1}');
    expect(again.body).toBe('{"n":1}');
    expect(composed).toBe(1);
  });

  test("two workers composing at once both send the one stored copy", async () => {
    const [one, other] = [new FrozenMessages(database.db), new FrozenMessages(database.db)];
    const compose = (n: number) => async () => message("msg_e2_1", `{"n":${n}}`);
    const [a, b] = await Promise.all([one.frozen("msg_e2_1", compose(1)), other.frozen("msg_e2_1", compose(2))]);
    expect(a.body).toBe(b.body);
  });

  test("a first activation that skips the lookup still sends the copy stored before it", async () => {
    const messages = new FrozenMessages(database.db);
    await messages.frozen("msg_e6_1", async () => message("msg_e6_1", '{"n":6}'));
    const first = await messages.frozen("msg_e6_1", async () => message("msg_e6_1", '{"n":7}'), { neverFrozen: true });
    expect(first.body).toBe('{"n":6}');
    const fresh = await messages.frozen("msg_e7_1", async () => message("msg_e7_1", '{"n":8}'), { neverFrozen: true });
    expect(fresh.body).toBe('{"n":8}');
    const [stored] = await database.sql`select body from webhook_dispatcher.messages where id = 'msg_e7_1'`;
    expect(stored!.body).toBe('{"n":8}');
  });

  test("deliveries in flight together each get their own message, stored or new", async () => {
    const messages = new FrozenMessages(database.db);
    await messages.frozen("msg_e3_1", async () => message("msg_e3_1", '{"n":3}'));
    const ids = ["msg_e3_1", "msg_e4_1", "msg_e5_1", "msg_e4_1"];
    const frozen = await Promise.all(ids.map((id, i) => messages.frozen(id, async () => message(id, `{"i":${i}}`))));
    expect(frozen.map((m) => m.id)).toEqual(ids);
    expect(frozen[0]!.body).toBe('{"n":3}');
    expect(frozen[1]!.body).toBe(frozen[3]!.body);
    const stored = await database.sql`select id, body from webhook_dispatcher.messages where id in ('msg_e4_1', 'msg_e5_1') order by id`;
    expect(stored.map((m) => [m.id, m.body])).toEqual([["msg_e4_1", frozen[1]!.body], ["msg_e5_1", '{"i":2}']]);
  });
});
