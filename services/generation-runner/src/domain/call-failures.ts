// What a failed provider call was, as the pacing (paced-call.ts) meets it: a pace to keep (429),
// an outage to wait out, a timeout, a target that is not there, or a refusal that will not heal.
import OpenAI from "openai";
import { ProviderNotConfigured } from "./providers.ts";

/** What a failed call was: how the pacing meets it. */
export type FailureKind = "rate_limited" | "outage" | "timeout" | "elsewhere" | "final";

/** The provider stayed unavailable longer than the runner's outage bound: the article fails. */
export class ProviderOutage extends Error {
  override readonly name = "ProviderOutage";
}

/** A call that timed out: the step's budget for it is spent. */
export class CallTimeout extends Error {
  override readonly name = "CallTimeout";
}

/** A call that failed for good: the last failure of each target tried. */
export class CallFailed extends Error {
  override readonly name = "CallFailed";
  constructor(readonly failures: Map<string, unknown>) {
    super(describeFailures(failures));
  }

  /** The last failure (of the last target tried). */
  get last(): unknown {
    return [...this.failures.values()].at(-1);
  }
}

export function failureKind(error: unknown): FailureKind {
  if (error instanceof CallTimeout || error instanceof OpenAI.APIConnectionTimeoutError) return "timeout";
  if (error instanceof ProviderNotConfigured) return "elsewhere";
  if (error instanceof OpenAI.APIUserAbortError) return "final";
  if (error instanceof OpenAI.APIConnectionError) return "outage";
  const status = error instanceof OpenAI.APIError ? error.status : (error as { status?: number }).status;
  const code = error instanceof OpenAI.APIError ? error.code : undefined;
  if (status === undefined) return error instanceof OpenAI.APIError || (error as { provider?: string }).provider ? "outage" : "final";
  // An account out of credit answers 429 too, but it heals only when someone pays: an outage, not a pace.
  if (status === 429) return code === "insufficient_quota" ? "outage" : "rate_limited";
  if (status === 408 || status >= 500) return "outage";
  if (status === 404) return "elsewhere";
  return "final";
}

export function describe(error: unknown): string {
  if (error instanceof OpenAI.APIError && error.status !== undefined) return `answered ${error.status}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** "a answered 503: …; b answered 500: …", the targets in the order they were tried. */
export function describeFailures(failures: Map<string, unknown>): string {
  return [...failures].map(([target, error]) => `${target} ${error instanceof CallTimeout ? error.message : describe(error).replace(/^(?!answered)/, ": ")}`).join("; ");
}
