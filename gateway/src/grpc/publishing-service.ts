// articles.api.v1.PublishingService: a project's publishing destinations and publishing articles
// over gRPC for internal teams. Each method passes the same gates as /v1 (API key or acting
// workload, subscription, and the rate limit of its HTTP twin: "workflows" for the destination
// calls, "articles" for PublishArticle) and runs the same operation
// (publishing/publishing-operations.ts) on the same public JSON body the HTTP route passes, so
// validation, access and refusals are those of /v1; this file only translates between the proto
// messages and that JSON, whose wire names the messages share.
import { fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  CheckDestinationResponseSchema,
  DestinationInputSchema,
  DestinationSchema,
  PublishingService,
  type DestinationInput,
} from "../../../proto/gen/articles/api/v1/publishing_pb.ts";
import { PublishInputSchema, type PublishInput } from "../../../proto/gen/articles/api/v1/articles_pb.ts";
import type { PublishingOperations } from "../publishing/publishing-operations.ts";
import { apiArticle } from "./api-article.ts";
import type { PublicCalls } from "./public-calls.ts";

/** The buckets of the HTTP routes: destinations are project settings, publishing is articles' work. */
const DESTINATIONS_BUCKET = "workflows";
const PUBLISH_BUCKET = "articles";

const destinationOf = (destination: unknown) => fromJson(DestinationSchema, destination as JsonValue, { ignoreUnknownFields: true });

/** An id the public body takes as a JSON number (proto3's JSON mapping writes int64 as a string). */
function asNumber(body: JsonObject, field: string): void {
  if (typeof body[field] === "string") body[field] = Number(body[field]);
}

/** A time as the body carries it; one no ISO 8601 date can hold is passed on as it is, for /v1's check to refuse on its field. */
function timeOf(t: Timestamp): string {
  const date = timestampDate(t);
  return Number.isNaN(date.getTime()) ? `${t.seconds}s` : date.toISOString();
}

/** The body POST /v1/projects/{project}/destinations takes, from the proto message. */
export function destinationBody(input: DestinationInput | undefined): JsonObject {
  if (!input) return {};
  const body = toJson(DestinationInputSchema, input, { useProtoFieldName: true }) as JsonObject;
  asNumber(body, "author_id");
  return body;
}

/** The body POST /v1/articles/{id}/publish takes, from the proto message. */
export function publishBody(input: PublishInput | undefined): JsonObject {
  if (!input) return {};
  // The time is written below: toJson throws on a Timestamp out of its range, where /v1 answers a field error.
  const body = toJson(PublishInputSchema, { ...input, publishAt: undefined }, { useProtoFieldName: true }) as JsonObject;
  asNumber(body, "destination_id");
  if (input.publishAt) body.publish_at = timeOf(input.publishAt);
  // A term list set (even empty) replaces the destination's defaults; unset keeps them.
  if (input.categories) body.categories = [...input.categories.names];
  if (input.tags) body.tags = [...input.tags.names];
  return body;
}

export function publishingService(router: ConnectRouter, calls: PublicCalls, publishing: PublishingOperations): void {
  const { answer } = calls;
  const destinationsCaller = calls.callerOf(DESTINATIONS_BUCKET);
  const publishCaller = calls.callerOf(PUBLISH_BUCKET);
  router.service(PublishingService, {
    listDestinations: (req, ctx) =>
      answer("ListDestinations", async () => ({ destinations: (await publishing.list(await destinationsCaller(ctx), String(req.projectId))).map(destinationOf) })),
    createDestination: (req, ctx) =>
      answer("CreateDestination", async () => {
        const { destination, warnings } = await publishing.create(await destinationsCaller(ctx), String(req.projectId), destinationBody(req.destination));
        return { destination: destinationOf(destination), warnings };
      }),
    getDestination: (req, ctx) =>
      answer("GetDestination", async () => ({
        destination: destinationOf(await publishing.get(await destinationsCaller(ctx), String(req.projectId), String(req.destinationId))),
      })),
    checkDestination: (req, ctx) =>
      answer("CheckDestination", async () => {
        const check = await publishing.check(await destinationsCaller(ctx), String(req.projectId), String(req.destinationId));
        return fromJson(CheckDestinationResponseSchema, check as unknown as JsonValue, { ignoreUnknownFields: true });
      }),
    deleteDestination: (req, ctx) =>
      answer("DeleteDestination", async () => ({ deleted: await publishing.delete(await destinationsCaller(ctx), String(req.projectId), String(req.destinationId)) })),
    publishArticle: (req, ctx) =>
      answer("PublishArticle", async () => {
        const { article, project } = await publishing.publish(await publishCaller(ctx), req.id, publishBody(req.publish));
        return { article: apiArticle(article, project) };
      }),
  });
}
