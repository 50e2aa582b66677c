// Public request bodies of publishing: a destination to add, and how to publish an article (the
// body of POST /v1/articles/{id}/publish, and `publish` in a creation request). The gateway checks
// JSON types and presence, and refuses before any call a credential, login name, category or tag
// list or slug longer than the kit's publishing limits (services/kit/src/rules/publishing.ts), a
// status or publish_at too long to be one; webhook-dispatcher enforces those limits too and owns
// every other rule (kinds, statuses, schedules, slug shapes, names, URLs), reported in the same
// 422 shape, which the gateway passes on (prefixed with `publish.` inside a creation request).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { PublishOptionsSchema } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { CreateDestinationRequestSchema } from "../../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import type { FieldErrors } from "../../../services/kit/src/errors.ts";
import { PUBLISHING_LIMITS as LIMITS } from "../../../services/kit/src/rules/publishing.ts";
import type { FieldTable } from "../openapi/fields.ts";
import { Validator } from "../validation.ts";

/** Longer than any post status of any kind of site: the gateway's own guard (the dispatcher names the statuses a kind accepts). */
const STATUS_MAX = 20;

const termList = (what: string, description: string, example: string[]) =>
  ({ type: "array", maxItems: LIMITS.terms, items: { type: "string", max: LIMITS.term, description: `A ${what} name.` }, description, example }) as const;

export const PUBLISH_FIELDS = {
  destination_id: { type: "integer", required: true, min: 1, description: "A destination of the article's project (GET /v1/projects/{project}/destinations).", example: 3 },
  status: { type: "string", description: "WordPress: draft, pending, private, publish or future; Ghost: draft, published or scheduled. Default: the destination's.", example: "publish" },
  publish_at: { type: "string", format: "date-time", description: "When the post goes live (a schedule); alone it means future/scheduled.", example: "2026-12-01T09:00:00Z" },
  categories: termList("category", `Category names (WordPress), created when missing; replaces the destination's defaults. At most ${LIMITS.terms}.`, ["Coffee"]),
  tags: termList("tag", `Tag names, created when missing; replaces the destination's defaults. At most ${LIMITS.terms}.`, ["espresso"]),
  slug: { type: "string", max: LIMITS.slug, description: "The post's slug: lower-case letters, digits and hyphens.", example: "espresso-at-home" },
} as const satisfies FieldTable;

export const DESTINATION_FIELDS = {
  kind: { type: "string", required: true, enum: ["wordpress", "ghost"], description: "The kind of site.", example: "wordpress" },
  name: { type: "string", required: true, max: LIMITS.name, description: `A name for people, 1 to ${LIMITS.name} characters.`, example: "Company blog" },
  site_url: { type: "string", required: true, max: LIMITS.siteUrl, format: "uri", description: "The site's https:// address (http:// only where ALLOW_PRIVATE_URLS marks a development setup).", example: "https://blog.example.com" },
  username: { type: "string", max: LIMITS.username, description: "WordPress: the login name of the user posts are published as.", example: "editor" },
  application_password: { type: "string", max: LIMITS.credential, description: "WordPress: an application password of that user (Users → Profile → Application Passwords). Write-only.", example: "abcd EFGH ijkl MNOP qrst UVWX" },
  admin_api_key: { type: "string", max: LIMITS.credential, description: "Ghost: an Admin API key, \"<id>:<secret>\" (Settings → Integrations). Write-only.", example: "6489d1c5e4b0c2a1f0e9d8c7:3f9a…" },
  default_status: { type: "string", max: STATUS_MAX, description: "WordPress: draft (default), pending, private or publish; Ghost: draft (default) or published.", example: "draft" },
  default_categories: termList("category", "WordPress category names for every post unless a publish names its own.", ["Guides"]),
  default_tags: termList("tag", "Tag names for every post unless a publish names its own.", ["coffee"]),
  author_id: { type: "integer", min: 1, description: "WordPress: the user id to publish as; the connected user when left out.", example: 2 },
} as const satisfies FieldTable;

type PublishOptionsInit = Omit<MessageInitShape<typeof PublishOptionsSchema>, "$typeName">;
type DestinationInit = Omit<MessageInitShape<typeof CreateDestinationRequestSchema>, "$typeName" | "projectId">;

const TERMS = { maxItems: LIMITS.terms, maxItemLength: LIMITS.term };

/** The publish fields of `body` (an object), with the gateway's field errors under `prefix`. */
export function publishInput(body: unknown, prefix = ""): { destinationId?: number; options: PublishOptionsInit; errors: FieldErrors } {
  const v = new Validator(body);
  const destinationId = v.integer("destination_id", { required: true, min: 1, max: Number.MAX_SAFE_INTEGER }) ?? undefined;
  const status = v.string("status", { max: STATUS_MAX }) ?? undefined;
  const at = v.string("publish_at", { max: 40 }) ?? undefined;
  let publishAt: Date | undefined;
  if (at !== undefined) {
    publishAt = /^\d{4}-\d\d-\d\dT/.test(at) ? new Date(at) : new Date(Number.NaN);
    if (Number.isNaN(publishAt.getTime())) v.fail("publish_at", "The publish at field must be an ISO 8601 date and time, e.g. 2026-12-01T09:00:00Z.");
  }
  const categories = v.stringArray("categories", TERMS);
  const tags = v.stringArray("tags", TERMS);
  const slug = v.string("slug", { max: LIMITS.slug }) ?? undefined;
  const errors: FieldErrors = {};
  for (const [field, messages] of Object.entries(v.errors)) errors[`${prefix}${field}`] = messages;
  return {
    destinationId,
    options: {
      status,
      publishAt: publishAt && !Number.isNaN(publishAt.getTime()) ? timestampFromDate(publishAt) : undefined,
      categories: categories ? { names: categories } : undefined,
      tags: tags ? { names: tags } : undefined,
      slug,
    },
    errors,
  };
}

/** A destination to add; 422 with every type error at once. */
export function destinationInput(body: unknown): DestinationInit {
  const v = new Validator(body);
  const kind = v.oneOf("kind", ["wordpress", "ghost"] as const, { required: true }) ?? "";
  // A name's and a site's presence, length and shape are left to webhook-dispatcher, which reports
  // them together with its other rules.
  const name = v.string("name") ?? "";
  const siteUrl = v.string("site_url") ?? "";
  const username = v.string("username", { max: LIMITS.username }) ?? undefined;
  const password = v.string("application_password", { max: LIMITS.credential }) ?? undefined;
  const adminKey = v.string("admin_api_key", { max: LIMITS.credential }) ?? undefined;
  // Each kind takes its own credential, so a key pasted into the wrong field is caught.
  if (kind === "wordpress" && password === undefined) v.fail("application_password", "The application password field is required for a WordPress destination.");
  if (kind === "wordpress" && adminKey !== undefined) v.fail("admin_api_key", "The admin api key field is for Ghost destinations.");
  if (kind === "ghost" && adminKey === undefined) v.fail("admin_api_key", "The admin api key field is required for a Ghost destination.");
  if (kind === "ghost" && password !== undefined) v.fail("application_password", "The application password field is for WordPress destinations.");
  const defaultStatus = v.string("default_status", { max: STATUS_MAX }) ?? undefined;
  const defaultCategories = v.stringArray("default_categories", TERMS) ?? [];
  const defaultTags = v.stringArray("default_tags", TERMS) ?? [];
  const authorId = v.integer("author_id", { min: 1, max: Number.MAX_SAFE_INTEGER }) ?? undefined;
  v.check();
  return {
    kind,
    name,
    siteUrl,
    username,
    credential: (kind === "ghost" ? adminKey : password) ?? "",
    defaultStatus,
    defaultCategories,
    defaultTags,
    authorId: authorId === undefined ? undefined : BigInt(authorId),
  };
}
