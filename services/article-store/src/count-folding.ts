// The background loop that folds recorded article count changes into the counts about once a
// second, so a list's total adds at most a second's worth of changes to the counts it reads.
import type { Logger } from "../../kit/src/logger.ts";
import type { Db } from "./db/client.ts";
import { FOLD_BATCH, foldCountChanges } from "./domain/article-counts.ts";

export interface CountFolding {
  stop(): Promise<void>;
}

export function startCountFolding(opts: { db: Db; logger: Logger; everyMs?: number }): CountFolding {
  const { db, logger } = opts;
  const everyMs = opts.everyMs ?? 1000;
  let stopped = false;
  let wakeUp: (() => void) | undefined;

  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, everyMs);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = (async () => {
    while (!stopped) {
      try {
        // A full batch means more are waiting (e.g. after a bulk import): fold on at once.
        while (!stopped && (await foldCountChanges(db)) === FOLD_BATCH);
      } catch (error) {
        // Postgres is away: the changes stay recorded and reads still count them.
        logger.error("count folding pass failed", { error });
      }
      if (!stopped) await sleep();
    }
  })();

  return {
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
