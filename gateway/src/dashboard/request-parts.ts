// Parts of a dashboard request every handler reads the same way: its JSON body and its client.
import { validationError } from "../errors.ts";
import { MalformedBody } from "../plugins/json-body.ts";
import { Validator } from "../validation.ts";

/** The validator of a JSON body, a malformed one refused as /v1 refuses it. */
export function bodyOf(body: unknown): Validator {
  if (body instanceof MalformedBody) throw validationError({ body: [body.reason] });
  return new Validator(body ?? {});
}

/** A client's address for the sign-in limits: the socket's peer (a proxy in front counts as one client). */
export type PeerServer = { requestIP(request: Request): { address: string } | null } | null;
export const clientAddress = (server: PeerServer, request: Request) => server?.requestIP(request)?.address ?? "unknown";
