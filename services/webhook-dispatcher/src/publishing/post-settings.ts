// How one article is posted to one destination: the publish request's options over the
// destination's defaults, checked against what that kind of site accepts. Checked when the request
// is made (PublishArticle, and creation with `publish`, as validate_only) and again when the job
// runs, since a schedule can pass while a job waits.
import { throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import type { PublishOptionsRecord } from "../../../kit/src/queues.ts";
import { PUBLISHING_LIMITS } from "../../../kit/src/rules/publishing.ts";
import { POST_STATUSES, termNames, type Destination, type DestinationKind } from "../domain/destinations.ts";

export interface PostSettings {
  status: string;
  /** When a scheduled post goes live. */
  publishAt?: Date;
  categories: string[];
  tags: string[];
  slug?: string;
  authorId?: number;
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const SLUG_MAX = PUBLISHING_LIMITS.slug;

/** The settings of a post, or INVALID_ARGUMENT naming the option fields (status, publish_at, categories, tags, slug). */
export function postSettings(destination: Pick<Destination, "kind" | "defaults">, options: PublishOptionsRecord, now = Date.now()): PostSettings {
  const kind = destination.kind as DestinationKind;
  const { defaults: allowed, scheduled } = POST_STATUSES[kind];
  const errors: FieldErrors = {};
  const publishAt = options.publishAt ? new Date(options.publishAt) : undefined;
  // A date alone asks for a schedule.
  const status = options.status ?? (publishAt ? scheduled : destination.defaults.status);
  if (![...allowed, scheduled].includes(status)) errors.status = [`status must be one of ${[...allowed, scheduled].join(", ")} for ${kind}.`];
  if (status === scheduled && !publishAt) errors.publish_at = [`publish_at is required when status is ${scheduled}.`];
  if (publishAt && (Number.isNaN(publishAt.getTime()) || publishAt.getTime() <= now)) errors.publish_at = ["publish_at must be a time in the future."];
  if (publishAt && status !== scheduled && !errors.status) errors.publish_at = [`publish_at goes with status ${scheduled} only.`];
  const categories = options.categories ? termNames("categories", options.categories, errors) : destination.defaults.categories;
  if (kind === "ghost" && options.categories && options.categories.length > 0) errors.categories = ["Ghost has no categories: use tags."];
  const tags = options.tags ? termNames("tags", options.tags, errors) : destination.defaults.tags;
  const slug = options.slug ?? undefined;
  if (slug !== undefined && (slug.length > SLUG_MAX || !SLUG.test(slug))) errors.slug = [`slug must be lower-case letters, digits and single hyphens, at most ${SLUG_MAX} characters.`];
  throwIfAny(errors);
  return { status, publishAt, categories, tags, slug, authorId: destination.defaults.authorId ?? undefined };
}
