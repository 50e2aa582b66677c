// The sources an article's version cites: stored with the version that cites them, so a read
// carries them without another call. The runner numbers them and says which the text cites.
import type { ArticleSource } from "../db/schema.ts";
import { isWebUrl } from "./article-images.ts";

const MAX_SOURCES = 20;

/** Collects what is wrong with a version's sources under `sources` and `citations_removed`. */
export function checkArticleSources(sources: ArticleSource[], removed: number, errors: Record<string, string[]>): void {
  const problems: string[] = [];
  if (sources.length > MAX_SOURCES) problems.push(`at most ${MAX_SOURCES} sources.`);
  const numbers = new Set<number>();
  for (const source of sources) {
    const at = `source ${source.number}`;
    if (!Number.isInteger(source.number) || source.number < 1 || numbers.has(source.number)) problems.push(`${at}: numbers must be distinct integers from 1.`);
    numbers.add(source.number);
    if (!isWebUrl(source.url)) problems.push(`${at}: url must be an http or https URL.`);
    if (Number.isNaN(Date.parse(source.fetchedAt))) problems.push(`${at}: fetched_at is required.`);
  }
  if (problems.length > 0) errors.sources = problems;
  if (!Number.isInteger(removed) || removed < 0) errors.citations_removed = ["citations_removed must be 0 or more."];
}
