// Waiting with a bound: the one way the services stop waiting on work that may never answer (a
// Redis that went away, a site that hangs, a drain at shutdown). The work itself is not cancelled:
// it goes on, and its late answer or failure is dropped.

/** The default rejection of `within`, so a caller can tell a late answer from a failed one. */
export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** `work`'s answer, or a rejection with `timedOut()` once `ms` have passed. */
export async function within<T>(work: Promise<T>, ms: number, timedOut: () => Error = () => new DeadlineExceeded(ms)): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `work` to settle (answer or fail) for at most `ms`: whether it did. */
export function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  return within(
    work.then(
      () => true,
      () => true,
    ),
    ms,
  ).catch(() => false);
}
