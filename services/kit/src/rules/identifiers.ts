// Identifiers as the spec reads them (4.3, 7): a path identifier that is a number, leading zeros
// included, or a UUID is looked up; anything else is not found without a lookup. The gateway reads
// every path id with these, and article-store its GetArticle identifier, so `/v1/articles/002`
// and GetArticle("002") both find article 2.

const DIGITS = /^[0-9]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);

/**
 * A number written in decimal digits, leading zeros allowed; null for anything else and for a
 * number no record can have (0, or past the largest safe integer: ids are bigserials read as
 * numbers), which is answered as not found either way.
 */
export function numericId(raw: string): number | null {
  if (!DIGITS.test(raw)) return null;
  const digits = raw.replace(/^0+/, "");
  if (digits === "" || digits.length > 16) return null;
  const id = Number(digits);
  return Number.isSafeInteger(id) ? id : null;
}

/** An article's identifier: its numeric id or its external_id (lower-cased, as stored); null when it can name no article. */
export type ArticleIdentifier = { id: number } | { externalId: string };

export function articleIdentifier(raw: string): ArticleIdentifier | null {
  if (isUuid(raw)) return { externalId: raw.toLowerCase() };
  const id = numericId(raw);
  return id === null ? null : { id };
}

/** The one spelling of an identifier: "2" for "002", a UUID in lower case. */
export const canonicalIdentifier = (identifier: ArticleIdentifier) => ("id" in identifier ? String(identifier.id) : identifier.externalId);
