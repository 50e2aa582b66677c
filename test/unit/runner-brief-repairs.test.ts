// Brief repairs without a model: each failed fixable check gets one call whose reply replaces only
// its part of the text, in the report's order, until the budget is spent; the title stays.
import { describe, expect, test } from "bun:test";
import { repairBrief } from "../../services/generation-runner/src/domain/brief-repairs.ts";
import type { BriefCheck, QualityReport } from "../../services/kit/src/rules/quality-report.ts";

const TEXT = "# Home Espresso\n\nAn opening about coffee at home.\n\n## Choosing Beans\n\nBeans matter.\n\n## Grinding\n\nGrinders and grind settings.\n";
const failed = (name: string, value: BriefCheck["value"] = false): BriefCheck => ({ name, status: "failed", value, target: "" });
const report = (...checks: BriefCheck[]): QualityReport => ({ checks, repairs: [] });
const brief = { title: "Home Espresso", language: "en", tone: "friendly", targetKeyword: "espresso grinder" };

function recorder(replies: Record<string, string>) {
  const tasks: string[] = [];
  const call = async (task: string) => {
    tasks.push(task);
    return replies[task.replace(/^repair \d+: /, "")] ?? "";
  };
  return { tasks, call };
}

describe("repairBrief", () => {
  test("rewrites only the part each failed check is about, and lists what it did", async () => {
    const { tasks, call } = recorder({
      keyword_in_introduction: "An espresso grinder decides most of it. More opening.",
      keyword_in_h2: "## Beans for Your Espresso Grinder\n\nA paragraph nobody asked for.",
      keywords_present: "Grinders, grind size and grind settings.",
      faq_section: "# Home Espresso\n\n## Frequently Asked Questions\n\nHow fine? Fine enough.",
      meta_description_length: '"A clear look at home espresso."',
    });
    const repaired = await repairBrief(
      TEXT,
      "Too short.",
      report(failed("keyword_in_introduction"), failed("keyword_in_h2"), failed("keywords_present", ["grind size"]), failed("faq_section"), failed("meta_description_length", 10)),
      brief,
      5,
      call,
    );
    expect(tasks).toEqual(["repair 1: keyword_in_introduction", "repair 2: keyword_in_h2", "repair 3: keywords_present", "repair 4: faq_section", "repair 5: meta_description_length"]);
    expect(repaired.text).toBe(
      "# Home Espresso\n\nAn espresso grinder decides most of it. More opening.\n\n## Beans for Your Espresso Grinder\n\nBeans matter.\n\n## Grinding\n\nGrinders, grind size and grind settings.\n\n## Frequently Asked Questions\n\nHow fine? Fine enough.\n",
    );
    expect(repaired.description).toBe("A clear look at home espresso.");
    expect(repaired.repairs.map((r) => [r.check, r.part, r.keyword])).toEqual([
      ["keyword_in_introduction", "Introduction", "espresso grinder"],
      ["keyword_in_h2", "Choosing Beans", "espresso grinder"],
      ["keywords_present", "Grinding", "grind size"],
      ["faq_section", "Frequently Asked Questions", undefined],
      ["meta_description_length", "description", undefined],
    ]);
  });

  test("drops a repeated paragraph without a call and rewrites a section holding model talk or filler", async () => {
    const repeated = "Grind fresh for every shot, because ground coffee goes stale within minutes and the shot shows it.";
    const padded = `# Home Espresso\n\nAn opening about coffee at home.\n\n## Choosing Beans\n\n${repeated}\n\nAs an AI language model, I cannot taste beans.\n\n## Grinding\n\nGrinders and grind settings.\n\n${repeated}\n`;
    const { tasks, call } = recorder({ no_placeholder_text: "Beans matter, and espresso grinder settings follow them." });
    const repaired = await repairBrief(padded, "d", report(failed("no_placeholder_text", ["As an AI language model"]), failed("no_filler", ["repeated paragraph: …"])), { ...brief, keepPhrases: ["espresso grinder"] }, 3, call);
    expect(tasks).toEqual(["repair 1: no_placeholder_text"]);
    expect(repaired.calls).toBe(1);
    expect(repaired.text).toBe("# Home Espresso\n\nAn opening about coffee at home.\n\n## Choosing Beans\n\nBeans matter, and espresso grinder settings follow them.\n\n## Grinding\n\nGrinders and grind settings.\n");
    expect(repaired.repairs.map((r) => [r.check, r.action, r.part])).toEqual([
      ["no_filler", "dropped a repeated paragraph", "Grinding"],
      ["no_placeholder_text", "rewrote a section without its filler", "Choosing Beans"],
    ]);
  });

  test("stops at its budget and leaves the rest as it was", async () => {
    const { tasks, call } = recorder({ keywords_present: "Some text with it." });
    const repaired = await repairBrief(TEXT, "Short.", report(failed("keywords_present", ["a", "b", "c"]), failed("meta_description_length", 6)), brief, 2, call);
    expect(tasks).toHaveLength(2);
    expect(repaired.repairs.map((r) => r.keyword)).toEqual(["a", "b"]);
    expect(repaired.description).toBe("Short.");
  });

  test("writes no description where the workflow writes none", async () => {
    const { tasks, call } = recorder({ meta_description_length: "A description." });
    const repaired = await repairBrief(TEXT, null, report(failed("meta_description_length", null)), brief, 3, call);
    expect(tasks).toEqual([]);
    expect(repaired.description).toBeNull();
  });

  test("makes no call when nothing it can fix failed", async () => {
    const { tasks, call } = recorder({});
    const repaired = await repairBrief(TEXT, "d", report(failed("readability", 30), { name: "keyword_in_introduction", status: "passed", value: true, target: "" }), brief, 3, call);
    expect(tasks).toEqual([]);
    expect(repaired).toEqual({ text: TEXT, description: "d", repairs: [], calls: 0 });
  });
});
