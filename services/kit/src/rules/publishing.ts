// The bounds of what a publishing request may carry: a destination's fields, a post's category
// and tag lists, its slug. webhook-dispatcher enforces them with every other publishing rule
// (domain/destinations.ts, publishing/post-settings.ts); the gateway states them in the public
// schema and refuses an over-long credential, login name, list or slug before it calls the
// dispatcher (publishing/publish-input.ts). Both read this one copy, so a changed bound changes
// the API and the dispatcher together.
export const PUBLISHING_LIMITS = {
  /** A destination's name, in characters. */
  name: 100,
  siteUrl: 2000,
  /** The WordPress login name. */
  username: 60,
  /** An application password or a Ghost Admin API key. */
  credential: 200,
  /** Categories or tags in one list. */
  terms: 20,
  /** One category or tag name, in characters. */
  term: 100,
  slug: 200,
} as const;
