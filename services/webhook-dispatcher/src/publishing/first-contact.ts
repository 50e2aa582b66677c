// A destination's first contact with its site, before it is added: a credential the site refuses
// is a mistake to report now, on its field, rather than at the first publication; a site that
// cannot be reached (down for maintenance, not yet public) still gets its destination, with a
// warning, since nothing about the destination is known to be wrong.
import { DeadlineExceeded, within } from "../../../kit/src/deadline.ts";
import { invalidFields } from "../../../kit/src/errors.ts";
import { publisherFor, type DestinationSite } from "./publishers.ts";

// A person waits on the answer: a site slower than this is reported as not reached.
export const FIRST_CONTACT_MS = 10_000;

const REFUSAL: Record<string, string> = {
  credential: "The site refused the credential",
  site_url: "This address cannot be used",
};

/**
 * The warnings to give with the new destination (empty when the site took the credential and lets
 * it write posts); INVALID_ARGUMENT on credential or site_url when the site's answer rules
 * the destination out. Nothing here ever carries the credential: the clients' messages are scrubbed of it.
 */
export async function firstContact(site: DestinationSite, credential: string, fetchFn: typeof fetch, waitMs = FIRST_CONTACT_MS): Promise<string[]> {
  const check = await within(publisherFor(site, credential, fetchFn).check(), waitMs).catch((error) => {
    if (error instanceof DeadlineExceeded) return "late" as const;
    throw error;
  });
  if (check === "late") return [`The site did not answer within ${waitMs / 1000} s; the destination was added, and POST …/check tries it again.`];
  if (check.refusedField) throw invalidFields({ [check.refusedField]: [`${REFUSAL[check.refusedField]}: ${check.problems.join(" ")}`] });
  return check.problems;
}
