// The shape of an article's quality report: the brief checks the runner measured on its current
// version (generation-runner's brief-checks.ts) and the repairs made. The article-store keeps it
// as the runner wrote it, and the public article presents it as it is.

export type CheckStatus = "passed" | "failed" | "not_measured";

export interface BriefCheck {
  /** What is checked, e.g. "length" or "keyword_in_h1". */
  name: string;
  status: CheckStatus;
  /** What was measured: a number, a yes or no, a language code, the offending text; null when not measured. */
  value: number | boolean | string | string[] | null;
  /** What the brief asks for, as a reader would say it. */
  target: string;
}

/** A change made to pass a failed check: one targeted model call on one part of the text. */
export interface QualityRepair {
  /** The failed check it answers, e.g. "keywords_present". */
  check: string;
  /** What was changed, e.g. "rewrote the introduction" or "wove a keyword into a section". */
  action: string;
  /** The part of the text changed: a section heading, or "description". */
  part: string;
  /** The keyword the repair brought in, for keyword repairs. */
  keyword?: string;
}

export interface QualityReport {
  checks: BriefCheck[];
  repairs: QualityRepair[];
}
