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

/** A change made to the text to pass a failed check (none are made yet: the list stays empty). */
export interface QualityRepair {
  check: string;
  action: string;
}

export interface QualityReport {
  checks: BriefCheck[];
  repairs: QualityRepair[];
}
