// The finishing work that brings a text to its brief, the same after the steps and after the
// humanize pass (which rewrites the whole text and can undo what the first round settled: its
// length, a keyword put in the introduction): length control, then the brief checks, then one
// repair call per failed fixable check within what is left of the article's repair budget, then
// (when a repair changed the text) one more pass of length control.
import type { QualityReport } from "../../../kit/src/rules/quality-report.ts";
import { repairBrief, type RepairBrief, type RepairedText } from "./brief-repairs.ts";
import { afterRepairs } from "./finishing-calls.ts";
import { controlLength, type FinishingCall, type LengthBrief } from "./length-control.ts";

export interface BriefFinishing {
  length: LengthBrief;
  repair: RepairBrief;
  /** The report on a text with its description, as it would be stored. */
  report: (text: string, description: string | null) => QualityReport;
  /** The description delivered with a text (a meta step's, else the text's own). */
  describe: (text: string) => string | null;
  /** The description is kept as stored, never rewritten (a version after the first takes no description of its own). */
  keepDescription?: boolean;
  /** Repair calls this round may make (0: checks only). */
  budget: number;
  /** Length control's calls and the repairs' (checkpointed under their tasks). */
  lengthCall: FinishingCall;
  repairCall: FinishingCall;
}

/** The text brought within its length and repaired where the checks failed; what was repaired. */
export async function finishToBrief(text: string, f: BriefFinishing): Promise<RepairedText> {
  const controlled = await controlLength(text, f.length, f.lengthCall);
  const description = f.describe(controlled);
  if (f.budget <= 0) return { text: controlled, description, repairs: [], calls: 0 };
  const report = f.report(controlled, description);
  const repaired = await repairBrief(controlled, f.keepDescription ? null : description, report, f.repair, f.budget, f.repairCall);
  // A repair can move the length off its target (a section rewritten shorter, an FAQ added): the
  // repaired text gets one more pass, its calls' tasks named apart from the first pass's so a later
  // pickup replays each from its own checkpoint.
  const written = repaired.repairs.length > 0 ? await controlLength(repaired.text, f.length, afterRepairs(f.lengthCall)) : repaired.text;
  return { ...repaired, text: written, description: f.keepDescription ? description : repaired.description };
}
