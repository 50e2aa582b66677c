import { describe, expect, test } from "bun:test";
import {
  BUILTIN_ARTICLE_TYPES,
  builtinWorkflow,
  isReservedArticleType,
  metaStepOf,
  starterPrompts,
  type BuiltinStep,
} from "../../services/workflow-catalog/src/domain/builtin-workflows/index.ts";
import { checkJsonSchemaRule } from "../../services/workflow-catalog/src/domain/json-schema-rule.ts";
import {
  findUnknownVariables,
  gatedVariablesWithoutFlag,
  stepOutputReferences,
} from "../../services/kit/src/rules/prompt-template.ts";

const SPEC_ORDER = [
  "blog_post",
  "ultimate_guide",
  "listicle",
  "product_review",
  "comparison",
  "tutorial",
  "news",
  "case_study",
  "song_meaning",
  "song_meaning_single_model_5",
];
const MULTI_STEP = SPEC_ORDER.filter((t) => t !== "song_meaning_single_model_5");

const workflow = (type: string) => {
  const found = builtinWorkflow(type);
  if (!found) throw new Error(`no built-in ${type}`);
  return found;
};

// Sentences of at least four words; bare variable lines and captions are not prompt text.
function sentences(prompt: string): string[] {
  return prompt
    .split(/(?<=[.!?:;])\s+|\n+/)
    .map((s) => s.replace(/^[-\d.\s]+/, "").trim().toLowerCase())
    .filter((s) => s.split(/\s+/).length >= 4);
}

describe("catalog of built-in types", () => {
  test("lists the ten reserved names in spec order", () => {
    expect<string[]>([...BUILTIN_ARTICLE_TYPES]).toEqual(SPEC_ORDER);
  });

  test("reserved names are recognised, case-insensitively; others are not", () => {
    for (const type of SPEC_ORDER) expect(isReservedArticleType(type)).toBe(true);
    expect(isReservedArticleType("Blog_Post")).toBe(true);
    expect(isReservedArticleType(" news ")).toBe(true);
    expect(isReservedArticleType("my_blog_post")).toBe(false);
    expect(isReservedArticleType("constructor")).toBe(false);
  });

  test("every reserved type has its workflow; others have none", () => {
    for (const type of SPEC_ORDER) expect(workflow(type).article_type).toBe(type);
    expect(builtinWorkflow("podcast")).toBeUndefined();
    expect(builtinWorkflow("toString")).toBeUndefined();
  });

  test("workflows are frozen", () => {
    const wf = workflow("blog_post");
    expect(Object.isFrozen(wf)).toBe(true);
    expect(Object.isFrozen(wf.steps[0])).toBe(true);
    expect(Object.isFrozen(wf.steps[1].json_schema)).toBe(true);
  });
});

describe.each(SPEC_ORDER)("built-in %s", (type) => {
  const wf = workflow(type);

  test("steps are ascending, named, within limits", () => {
    const numbers = wf.steps.map((s) => s.step_number);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(new Set(wf.steps.map((s) => s.step_name)).size).toBe(wf.steps.length);
    for (const step of wf.steps) {
      expect(step.step_number).toBeGreaterThanOrEqual(1);
      expect(step.step_name.length).toBeGreaterThan(0);
      expect(step.step_name.length).toBeLessThanOrEqual(255);
      expect((step.step_icon ?? "").length).toBeLessThanOrEqual(50);
      expect(step.timeout_seconds).toBeGreaterThanOrEqual(30);
      expect(step.timeout_seconds).toBeLessThanOrEqual(600);
      expect(["text", "json", "markdown"]).toContain(step.output_format);
    }
  });

  test("prompts use only known variables, with the flags they need, and only earlier outputs", () => {
    for (const step of wf.steps) {
      for (const prompt of [step.system, step.user]) {
        expect(findUnknownVariables(prompt)).toEqual([]);
        expect(gatedVariablesWithoutFlag(prompt, step)).toEqual([]);
        for (const n of stepOutputReferences(prompt)) {
          expect(n).toBeLessThan(step.step_number);
          expect(wf.steps.some((s) => s.step_number === n)).toBe(true);
        }
      }
    }
  });

  test("json steps have schemas that satisfy the rule; others have none", () => {
    for (const step of wf.steps) {
      if (step.output_format === "json") {
        expect(step.json_schema).not.toBeNull();
        expect(checkJsonSchemaRule(step.json_schema)).toBeNull();
      } else {
        expect(step.json_schema).toBeNull();
      }
    }
  });

  test("the last step produces markdown article content", () => {
    expect(wf.steps.at(-1)!.output_format).toBe("markdown");
  });

  test("starter prompts share no sentence with the built-in prompts", () => {
    const builtin = new Set(wf.steps.flatMap((s) => [...sentences(s.system), ...sentences(s.user)]));
    for (const step of wf.steps) {
      const starter = starterPrompts(step, wf.steps);
      for (const sentence of [...sentences(starter.system), ...sentences(starter.user)]) {
        expect(builtin.has(sentence)).toBe(false);
      }
      expect(starter.user).not.toContain(step.user);
      expect(findUnknownVariables(starter.system + starter.user)).toEqual([]);
      expect(gatedVariablesWithoutFlag(starter.user, step)).toEqual([]);
      for (const n of stepOutputReferences(starter.user)) expect(n).toBeLessThan(step.step_number);
    }
  });
});

describe.each(MULTI_STEP)("multi-step built-in %s", (type) => {
  const wf = workflow(type);
  const byRole = (role: BuiltinStep["role"]) => wf.steps.filter((s) => s.role === role);

  test("is research, outline, draft, meta, polish", () => {
    expect(wf.steps.map((s) => [s.step_number, s.role])).toEqual([
      [1, "research"],
      [2, "outline"],
      [3, "draft"],
      [4, "meta"],
      [5, "polish"],
    ]);
  });

  test("exactly one step includes research, and it handles research being off", () => {
    const research = wf.steps.filter((s) => s.include_research);
    expect(research.map((s) => s.role)).toEqual(["research"]);
    expect(research[0].user).toContain("{research}");
    expect(research[0].user).toMatch(/general knowledge/);
    expect(research[0].output_format).toBe("markdown");
  });

  test("outline is schema-bound JSON with the requirements", () => {
    const [outline] = byRole("outline");
    expect(outline.output_format).toBe("json");
    expect(outline.include_requirements).toBe(true);
    expect(outline.user).toContain("{step_1_output}");
    expect(outline.user).toContain("{requirements}");
  });

  test("draft builds on outline and notes with requirements, context and instruction", () => {
    const [draft] = byRole("draft");
    expect(draft.output_format).toBe("markdown");
    expect(draft.include_requirements && draft.include_additional_context && draft.include_additional_instruction).toBe(true);
    for (const v of ["{step_2_output}", "{step_1_output}", "{requirements}", "{additional_context}", "{additional_instruction}", "{target_word_count}"]) {
      expect(draft.user).toContain(v);
    }
  });

  test("meta step writes meta_title and meta_description from the draft", () => {
    const meta = metaStepOf(wf)!;
    expect(meta.step_number).toBe(4);
    expect(meta.output_format).toBe("json");
    expect(meta.json_schema).toMatchObject({ required: ["meta_title", "meta_description"] });
    expect(meta.user).toContain("{step_3_output}");
    expect(meta.user).toMatch(/60 characters/);
    expect(meta.user).toMatch(/155 characters/);
  });

  test("polish is last and edits the draft", () => {
    const polish = wf.steps.at(-1)!;
    expect(polish.role).toBe("polish");
    expect(polish.user).toContain("{step_3_output}");
    expect(polish.include_requirements).toBe(true);
  });
});

describe("genre-specific prompts", () => {
  const allPrompts = (type: string) => workflow(type).steps.map((s) => `${s.system}\n${s.user}`).join("\n");
  const draftOf = (type: string) => workflow(type).steps.find((s) => s.role === "draft")!.user;

  test("each genre's draft prompt differs from every other", () => {
    const drafts = MULTI_STEP.map(draftOf);
    expect(new Set(drafts).size).toBe(drafts.length);
  });

  test("structure cues per genre", () => {
    expect(draftOf("listicle")).toMatch(/"1\. Item name"/);
    expect(draftOf("listicle")).toMatch(/same pattern/);
    expect(draftOf("product_review")).toMatch(/Verdict/);
    expect(draftOf("product_review")).toMatch(/Pros and cons/);
    expect(draftOf("product_review")).toMatch(/Who it is for/);
    expect(draftOf("product_review")).toMatch(/Rating/);
    expect(draftOf("product_review")).toMatch(/never invent/i);
    expect(draftOf("comparison")).toMatch(/markdown table/);
    expect(draftOf("comparison")).toMatch(/criterion/);
    expect(draftOf("tutorial")).toMatch(/Prerequisites/);
    expect(draftOf("tutorial")).toMatch(/Step 1/);
    expect(draftOf("tutorial")).toMatch(/Troubleshooting/);
    expect(draftOf("news")).toMatch(/Lede/);
    expect(draftOf("news")).toMatch(/attributed/);
    expect(draftOf("news")).toMatch(/no speculation/);
    expect(draftOf("case_study")).toMatch(/challenge/i);
    expect(draftOf("case_study")).toMatch(/approach/i);
    expect(draftOf("case_study")).toMatch(/results/i);
    expect(draftOf("case_study")).toMatch(/Lessons/);
    expect(draftOf("case_study")).toMatch(/Never invent metrics/);
    expect(draftOf("ultimate_guide")).toMatch(/Table of contents/);
    expect(allPrompts("song_meaning")).toMatch(/do not reproduce long passages/i);
  });
});

describe("song_meaning_single_model_5", () => {
  const wf = workflow("song_meaning_single_model_5");

  test("is one markdown step with requirements and context, usable by batch mode", () => {
    expect(wf.steps).toHaveLength(1);
    const [step] = wf.steps;
    expect(step.step_number).toBe(1);
    expect(step.output_format).toBe("markdown");
    expect(step.include_requirements).toBe(true);
    expect(step.include_additional_context).toBe(true);
    expect(step.include_research).toBe(false);
    expect(stepOutputReferences(step.user)).toEqual([]);
    expect(step.user).toMatch(/do not reproduce long passages/i);
    expect(metaStepOf(wf)).toBeUndefined();
  });
});

describe("starterPrompts", () => {
  test("polish starter builds on the draft, not the meta step before it", () => {
    const wf = workflow("blog_post");
    expect(starterPrompts(wf.steps[4], wf.steps).user).toContain("{step_3_output}");
    expect(starterPrompts(wf.steps[4], wf.steps).user).not.toContain("{step_4_output}");
    expect(starterPrompts(wf.steps[2], wf.steps).user).toContain("{step_2_output}");
  });

  test("research starter keeps {research}; outline starter asks for JSON", () => {
    const wf = workflow("tutorial");
    expect(starterPrompts(wf.steps[0], wf.steps).user).toContain("{research}");
    expect(starterPrompts(wf.steps[1], wf.steps).system).toMatch(/JSON/);
  });

  test("without siblings, a later step falls back to the previous output", () => {
    const wf = workflow("news");
    expect(starterPrompts(wf.steps[2]).user).toContain("{step_2_output}");
    expect(stepOutputReferences(starterPrompts(wf.steps[0]).user)).toEqual([]);
  });
});
