// webhook-dispatcher's refusals of publishing requests as the public API's field errors
// (gateway/src/publishing/dispatcher-refusals.ts): each lands on a field the request has.
import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { invalidFields, toConnectError } from "../../services/kit/src/errors.ts";
import { HttpError } from "../../gateway/src/errors.ts";
import { fieldErrorsOfRefusal } from "../../gateway/src/publishing/dispatcher-refusals.ts";
import { PublishingOperations } from "../../gateway/src/publishing/publishing-operations.ts";

const WORDPRESS = { kind: "wordpress", name: "Company blog", site_url: "https://blog.example.com", username: "editor", application_password: "abcd EFGH ijkl MNOP qrst UVWX" };

/** The 422 that adding WORDPRESS answers when the dispatcher refuses it with `refusal`. */
async function createRefusedWith(refusal: Error): Promise<HttpError> {
  const gate = { projects: { authorize: async () => {} }, clients: { publishing: { createDestination: async () => Promise.reject(refusal) } } };
  const operations = new PublishingOperations(gate as any, undefined as any);
  try {
    await operations.create({ userId: 1 } as any, "7", WORDPRESS);
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("adding a destination", () => {
  test("a refusal naming no field is the body's: the request has no destination_id", async () => {
    const refused = await createRefusedWith(new ConnectError("The site refused the destination.", Code.InvalidArgument));
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({ body: ["The site refused the destination."] });
  });

  test("a refusal of fields keeps them, the credential named as the request names it", async () => {
    const refused = await createRefusedWith(toConnectError(invalidFields({ name: ["name must be 1 to 100 characters."], credential: ["credential is required."] })));
    expect(refused.body.errors).toEqual({ name: ["name must be 1 to 100 characters."], application_password: ["credential is required."] });
  });
});

describe("publishing", () => {
  test("a refusal naming no field is the destination's, under the request's prefix", () => {
    const error = new ConnectError("The destination cannot take posts now.", Code.FailedPrecondition);
    expect(fieldErrorsOfRefusal("publish.", error)).toEqual({ "publish.destination_id": ["The destination cannot take posts now."] });
    expect(fieldErrorsOfRefusal("", new ConnectError("Destination not found.", Code.NotFound))).toEqual({ destination_id: ["No such destination in the article's project."] });
  });
});
