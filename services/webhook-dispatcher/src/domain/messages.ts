// Completion messages, frozen at the first attempt: every retry sends the same body to the same
// URL, even if the article record moves on (its updated_at advances as attempts are logged).
// The deliveries in flight look theirs up, and store new ones, together.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { messages } from "../db/schema.ts";
import { CallBatches } from "../../../kit/src/call-batches.ts";

export interface CompletionMessage {
  id: string;
  externalId: string;
  versionId: number;
  projectId: number;
  url: string;
  body: string;
}

const LIMITS = { maxSize: 500, maxRunning: 1 };

export class FrozenMessages {
  private readonly stored: CallBatches<string, CompletionMessage | undefined>;
  private readonly storing: CallBatches<CompletionMessage, CompletionMessage>;

  constructor(db: Db) {
    const storedOf = async (ids: string[]) => {
      const rows = await db.select().from(messages).where(sql`${messages.id} = any(${sql.param(ids)}::text[])`);
      return new Map(rows.map((m) => [m.id, m]));
    };
    this.stored = new CallBatches(async (ids) => {
      const byId = await storedOf(ids);
      return ids.map((id) => byId.get(id));
    }, LIMITS);
    // First writer wins: a message another worker froze in between is the one every attempt sends.
    // The new messages travel as one JSON parameter, so the statement is the same for any batch.
    this.storing = new CallBatches(async (fresh) => {
      const rows = fresh.map((m) => ({ id: m.id, external_id: m.externalId, version_id: m.versionId, project_id: m.projectId, url: m.url, body: m.body }));
      const inserted = await db.execute<{ id: string }>(sql`
        insert into ${messages} (id, external_id, version_id, project_id, url, body)
        select * from json_to_recordset(${JSON.stringify(rows)}::json) as m(id text, external_id text, version_id bigint, project_id bigint, url text, body text)
        on conflict (id) do nothing returning id`);
      // An id asked for twice is stored from its first copy, the row that went in.
      const first = new Map<string, CompletionMessage>();
      for (const m of fresh) if (!first.has(m.id)) first.set(m.id, m);
      const byId = new Map(inserted.map(({ id }) => [id, first.get(id)!]));
      const lost = fresh.filter((m) => !byId.has(m.id)).map((m) => m.id);
      if (lost.length > 0) for (const [id, m] of await storedOf(lost)) byId.set(id, m);
      return fresh.map((m) => byId.get(m.id) ?? new Error(`message ${m.id} was neither stored nor found`));
    }, LIMITS);
  }

  /**
   * The stored message with this id, or the one `compose` builds, stored first-writer-wins.
   * `neverFrozen` skips the lookup for a delivery whose job has never run before (its first
   * activation): nothing can be stored yet, and should another copy have frozen one meanwhile,
   * the first-writer-wins insert answers that one all the same.
   */
  async frozen(id: string, compose: () => Promise<CompletionMessage>, opts: { neverFrozen?: boolean } = {}): Promise<CompletionMessage> {
    const stored = opts.neverFrozen ? undefined : await this.stored.ask(id);
    return stored ?? this.storing.ask(await compose());
  }
}
