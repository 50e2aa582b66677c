// The gateway's memory of the model catalog's answers, which every creation asks (which model,
// and is it active). The catalog is generation-runner's, and its event loop is busiest exactly
// when creations come fast (it runs what they create): asking it every half second made
// creations wait up to 0.7 s for its answer under load (docs/performance.md). The catalog
// changes rarely, and every change is announced (kit/src/model-catalog-changes.ts), so answers
// are kept until a change is heard, for SETTLED_MS at most (looked up again in the background
// halfway), and a model switched off is still refused within a second:
// - on hearing a change, everything remembered is forgotten, and for CATALOG_ANSWER_AGE_MAX_MS
//   (how old a runner's own answer may be) answers are kept only half a second, as before
//   announcements, since a runner may still answer from its catalog as read before the change;
// - while the gateway is not listening (before its subscription, or after losing it, when an
//   announcement may be missed) the same short rule holds, and for as long again once it listens;
// - a lookup under way when a change is heard answers its callers but is not remembered.
// Refusals (an unknown or inactive model) are never remembered (ShortMemory).
import type { Model } from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { CATALOG_ANSWER_AGE_MAX_MS, CATALOG_UNANNOUNCED_FOLLOWED_MS, modelCatalogChangesChannel } from "../../../services/kit/src/model-catalog-changes.ts";
import type { RedisConnection } from "../../../services/kit/src/redis.ts";
import { ChangeListener } from "../plugins/change-listener.ts";
import { SHORT_MEMORY_MS, ShortMemory } from "../plugins/short-memory.ts";

/** The longest an answer is kept between announced changes (one lost with a runner that stopped between its change and the announcement). */
const SETTLED_MS = CATALOG_UNANNOUNCED_FOLLOWED_MS;
const KNOWN_MODELS_AT_MOST = 256;

export class ModelMemory {
  /** Answers while a change may not have reached every runner's catalog yet, or while not listening. */
  private readonly settling = new ShortMemory<Model>(SHORT_MEMORY_MS, KNOWN_MODELS_AT_MOST, SHORT_MEMORY_MS / 2);
  /** Answers looked up once every runner has read the catalog since the last change. */
  private readonly settled = new ShortMemory<Model>(SETTLED_MS, KNOWN_MODELS_AT_MOST, SETTLED_MS / 2);
  /** From when a lookup's answer reflects every change heard (or possibly missed). */
  private settledFrom = Number.POSITIVE_INFINITY;
  private readonly changes: ChangeListener;

  /** `subscriber` is a connection in subscriber mode (ChangeListener). */
  constructor(subscriber: RedisConnection, redisPrefix: string, logger: Logger) {
    const unsettle = () => {
      this.settled.clear();
      this.settling.clear();
      this.settledFrom = Date.now() + CATALOG_ANSWER_AGE_MAX_MS;
    };
    this.changes = new ChangeListener(subscriber, modelCatalogChangesChannel(redisPrefix), logger, unsettle, unsettle, unsettle);
  }

  /** Whether announcements are heard (answers are kept only half a second otherwise). */
  get listening(): boolean {
    return this.changes.listening;
  }

  /** Whether answers looked up now are kept until a change is heard (not only half a second). */
  get settledNow(): boolean {
    return this.changes.listening && Date.now() >= this.settledFrom;
  }

  /** The catalog's answer for `requested` ("" for the default model), or `lookup()` remembered as above. */
  resolve(requested: string, lookup: () => Promise<Model>): Promise<Model> {
    return (this.settledNow ? this.settled : this.settling).get(requested, lookup);
  }
}
