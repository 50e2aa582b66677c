// Categories and tags by name: a post takes term ids, a user thinks in names. A name the site
// does not have yet is created (that needs the manage_categories capability).
import { htmlText } from "./html-text.ts";
import { WordPressError } from "./wordpress-errors.ts";
import type { WordPressRest } from "./wordpress-rest.ts";

export type Taxonomy = "categories" | "tags";

interface Term {
  id: number;
  name: string;
}

// WordPress answers term names HTML-escaped ("Tips &amp; tricks").
const decodeEntities = (text: string) =>
  text
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#039;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** How WordPress compares term names: case and surrounding space do not matter. */
const sameName = (a: string, b: string) => decodeEntities(a).trim().toLowerCase() === b.trim().toLowerCase();

// …and stores them escaped, so a search for "Tips & tricks" only finds "Tips &amp; tricks" by that spelling.
async function findTerm(rest: WordPressRest, taxonomy: Taxonomy, name: string): Promise<number | undefined> {
  for (const search of new Set([name, htmlText(name)])) {
    const { data } = await rest.call<Term[]>(`wp/v2/${taxonomy}`, { query: { search, per_page: 100, hide_empty: false, _fields: "id,name" } });
    const found = data.find((term) => sameName(term.name, name));
    if (found) return found.id;
  }
  return undefined;
}

async function createTerm(rest: WordPressRest, taxonomy: Taxonomy, name: string): Promise<number> {
  try {
    const { data } = await rest.call<Term>(`wp/v2/${taxonomy}`, { method: "POST", json: { name } });
    return data.id;
  } catch (error) {
    // Made meanwhile by someone else (or a parallel publish): WordPress names the one it has.
    const existing = error instanceof WordPressError && error.code === "term_exists" ? await findTerm(rest, taxonomy, name) : undefined;
    if (existing !== undefined) return existing;
    throw error;
  }
}

/** The ids of the terms named `names` (duplicates and blanks left out), creating those the site lacks. */
export async function termIdsByName(rest: WordPressRest, taxonomy: Taxonomy, names: readonly string[]): Promise<number[]> {
  const wanted = [...new Map(names.map((n) => n.trim()).filter(Boolean).map((n) => [n.toLowerCase(), n])).values()];
  const ids: number[] = [];
  for (const name of wanted) ids.push((await findTerm(rest, taxonomy, name)) ?? (await createTerm(rest, taxonomy, name)));
  return [...new Set(ids)];
}
