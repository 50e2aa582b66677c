// The gateway's memory of which workflow revision an article type of a project resolves to, so a
// creation does not cost a call to workflow-catalog each time, and of the project's list pages as
// presented, so a dashboard or integration polling a project's workflows does not cost a call and
// the presentation each time (access is still checked on every read, before the memory is asked).
// Workflows change only through the gateway's workflow routes: after every change call (whatever
// its outcome) the gateway forgets the project's entries itself, then announces the project on a
// Redis channel, before it answers; every gateway forgets the project's entries when it hears
// that. So a change is followed at once by the gateway that made it and within the
// announcement's delivery by the others. An entry also lives a second at most (an announcement
// lost with a gateway that stopped between the change and its publish), nothing is remembered
// while not listening, refusals (an unknown type) are never remembered, and entries are keyed by
// project: a project's custom types and pages are its own.
import type { PinnedWorkflow } from "../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { redisKey, type RedisConnection } from "../../../services/kit/src/redis.ts";
import { ChangeListener } from "../plugins/change-listener.ts";

const TTL_MS = 1_000;
const MAX_ENTRIES = 1_000;
/** Pages hold prompts (up to per_page workflows of them each): fewer of them are kept. */
const MAX_PAGES = 100;

interface Entry {
  value: unknown;
  expires: number;
}

export const workflowChangesChannel = (redisPrefix: string) => redisKey(redisPrefix, "workflow-changes");

export class WorkflowMemory {
  /** By project id, then what is remembered of it (an article type's revision, a list page). */
  private readonly entries = new Map<string, Map<string, Entry>>();
  private size = 0;
  private pages = 0;
  private readonly changes: ChangeListener;
  private readonly channel: string;

  /** `redis` publishes; `subscriber` is a connection in subscriber mode (ChangeListener). */
  constructor(
    private readonly redis: RedisConnection,
    subscriber: RedisConnection,
    redisPrefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = workflowChangesChannel(redisPrefix);
    this.changes = new ChangeListener(subscriber, this.channel, logger, (projectId) => this.forget(projectId), () => this.clear());
  }

  /** Whether announcements are heard (nothing is remembered otherwise). */
  get listening(): boolean {
    return this.changes.listening;
  }

  /** The revision `articleType` of the project resolves to now, remembered or read with `lookup`. */
  resolve(projectId: bigint, articleType: string, lookup: () => Promise<PinnedWorkflow>): Promise<PinnedWorkflow> {
    return this.recall(projectId, `type ${articleType}`, lookup);
  }

  /** A list page of the project's workflows (`query` says which), remembered or read with `lookup`. */
  page<T>(projectId: bigint, query: string, lookup: () => Promise<T>): Promise<T> {
    return this.recall(projectId, `page ${query}`, lookup);
  }

  private async recall<T>(projectId: bigint, key: string, lookup: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const project = String(projectId);
    const cached = this.entries.get(project)?.get(key);
    if (cached && cached.expires > now) return cached.value as T;
    const mayRemember = this.changes.readStarts();
    const value = await lookup();
    if (mayRemember()) this.remember(project, key, { value, expires: now + TTL_MS });
    return value;
  }

  /** Runs a change to the project's workflows, then forgets and announces the project, whatever the change's outcome. */
  async changing<T>(projectId: bigint, change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } finally {
      const project = String(projectId);
      this.changes.changed();
      this.forget(project);
      // Unannounced, other gateways follow the change when their entries expire (a second).
      await this.redis.publish(this.channel, project).catch((error) => this.logger.warn("could not announce a workflow change", { projectId: project, error: (error as Error).message }));
    }
  }

  private remember(project: string, key: string, entry: Entry): void {
    const page = key.startsWith("page ");
    if (this.size >= MAX_ENTRIES || (page && this.pages >= MAX_PAGES)) this.clear();
    let remembered = this.entries.get(project);
    if (!remembered) this.entries.set(project, (remembered = new Map()));
    if (!remembered.has(key)) {
      this.size++;
      if (page) this.pages++;
    }
    remembered.set(key, entry);
  }

  private forget(project: string): void {
    for (const key of this.entries.get(project)?.keys() ?? []) {
      this.size--;
      if (key.startsWith("page ")) this.pages--;
    }
    this.entries.delete(project);
  }

  private clear(): void {
    this.entries.clear();
    this.size = 0;
    this.pages = 0;
  }
}
