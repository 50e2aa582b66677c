// The background loop that folds changes recorded by triggers (article counts, word usage) into
// the totals they change about once a second, so a read adds at most a second's worth of changes
// to the totals it reads. Folding is a batch at a time; a full batch means more are waiting (after
// a bulk import, say), so it folds on at once.
import type { Logger } from "./logger.ts";

export interface ChangeFolding {
  stop(): Promise<void>;
}

export function startChangeFolding(opts: {
  /** What is folded, for the log. */
  what: string;
  /** Folds about `batch` changes (at least that many means more wait); the number folded (0 while another replica folds). */
  fold: () => Promise<number>;
  batch: number;
  logger: Logger;
  everyMs?: number;
}): ChangeFolding {
  const { fold, batch, logger } = opts;
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
        while (!stopped && (await fold()) >= batch);
      } catch (error) {
        // Postgres is away: the changes stay recorded and reads still count them.
        logger.error(`${opts.what} folding pass failed`, { error });
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
