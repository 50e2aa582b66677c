// What webhook-dispatcher refuses of a publishing request, as the public API's field errors: the
// publishing calls' refusals, and a creation request's `publish` checked ahead of creation. Kept
// apart from the publishing operations so article creation can check `publish` without depending
// on them (they depend on the article operations, which create articles).
import { Code, ConnectError } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AutoPublishSchema } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { fieldErrorsOf, type FieldErrors } from "../../../services/kit/src/errors.ts";
import type { V1Gate } from "../plugins/caller.ts";
import { publishInput } from "./publish-input.ts";

/**
 * The dispatcher's refusal of a request's fields, under `prefix`: its NOT_FOUND for the destination
 * is a field error of destination_id, and a refusal naming no field is one of `unnamed` (a field
 * of the request: the destination it publishes to, or the body of a destination being added).
 */
export function fieldErrorsOfRefusal(prefix: string, error: unknown, unnamed = "destination_id"): FieldErrors | undefined {
  if (!(error instanceof ConnectError)) return undefined;
  if (error.code === Code.NotFound && /destination/i.test(error.rawMessage)) return { [`${prefix}destination_id`]: ["No such destination in the article's project."] };
  if (error.code !== Code.InvalidArgument && error.code !== Code.FailedPrecondition) return undefined;
  const errors: FieldErrors = {};
  for (const [field, messages] of Object.entries(fieldErrorsOf(error))) errors[`${prefix}${field}`] = messages;
  return Object.keys(errors).length ? errors : { [`${prefix}${unnamed}`]: [error.rawMessage] };
}

/**
 * `publish` of a creation request, checked against the project's destination (validate_only):
 * what the article keeps, or its field errors under `publish.` to join the request's others.
 */
export async function checkAutoPublish(dispatcher: V1Gate["clients"]["publishing"], projectId: bigint, body: unknown): Promise<{ publish?: MessageInitShape<typeof AutoPublishSchema>; errors: FieldErrors }> {
  const { destinationId, options, errors } = publishInput(body, "publish.");
  if (Object.keys(errors).length > 0) return { errors };
  try {
    await dispatcher.publishArticle({ projectId, externalId: "-", destinationId: BigInt(destinationId!), options, validateOnly: true });
  } catch (error) {
    const refused = fieldErrorsOfRefusal("publish.", error);
    if (!refused) throw error;
    return { errors: refused };
  }
  return { publish: { destinationId: BigInt(destinationId!), options }, errors: {} };
}
