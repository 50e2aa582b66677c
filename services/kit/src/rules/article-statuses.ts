// The article statuses of the spec (2.2), and the groups of them every service acts on: one home,
// so the store's transitions, the runner's take-up, the gateway's event stream and the chaos
// tally agree on what "still running" means.

export const ARTICLE_STATUSES = ["queued", "batching", "writing", "polishing", "completed", "published", "failed"] as const;
export type ArticleStatus = (typeof ARTICLE_STATUSES)[number];

/** What an article may be created as: queued, or batching when it goes to a provider's batch. */
export const INITIAL_STATUSES = ["queued", "batching"] as const satisfies readonly ArticleStatus[];
export type InitialStatus = (typeof INITIAL_STATUSES)[number];

/** Generation has not ended: waiting for a run or in one. */
export const RUNNING_STATUSES = ["queued", "batching", "writing", "polishing"] as const satisfies readonly ArticleStatus[];

export function isRunningStatus(status: string): boolean {
  return (RUNNING_STATUSES as readonly string[]).includes(status);
}
