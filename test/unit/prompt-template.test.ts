import { describe, expect, test } from "bun:test";
import {
  findUnknownVariables,
  gatedVariablesWithoutFlag,
  isTemplateVariable,
  renderRequirements,
  renderTemplate,
  stepOutputReferences,
  temperatureForTone,
  type RequirementsInput,
  type TemplateValues,
} from "../../services/kit/src/rules/prompt-template.ts";

const values: TemplateValues = {
  title: "How to brew coffee",
  target_keyword: "brew coffee",
  article_type: "blog_post",
  tone: "friendly",
  point_of_view: "second_person",
  language: "en",
  country_targeting: "US",
  target_word_count: 1200,
  additional_context: "We sell grinders.",
  additional_instruction: "Mention decaf.",
  requirements: "REQ",
  research: "[1] Source one",
  outline: "OUTLINE",
  step_outputs: new Map([
    [1, "notes"],
    [3, "draft"],
  ]),
};

describe("renderTemplate", () => {
  test("replaces always-available variables", () => {
    const out = renderTemplate(
      "{title}|{target_keyword}|{article_type}|{tone}|{point_of_view}|{language}|{country_targeting}|{target_word_count}",
      values,
      {},
    );
    expect(out).toBe("How to brew coffee|brew coffee|blog_post|friendly|second_person|en|US|1200");
  });

  test("is single pass: a value containing variables is inserted literally", () => {
    const tricky = { ...values, title: "Why {step_1_output} and {title} matter", research: "see {requirements}" };
    const out = renderTemplate("T={title} R={research} S={step_1_output}", tricky, { include_research: true });
    expect(out).toBe("T=Why {step_1_output} and {title} matter R=see {requirements} S=notes");
  });

  test("a step output containing a variable stays literal", () => {
    const outputs = new Map([[1, "draft about {title} and {step_2_output}"]]);
    expect(renderTemplate("{step_1_output}", { ...values, step_outputs: outputs }, {})).toBe(
      "draft about {title} and {step_2_output}",
    );
  });

  test("gated variables are empty unless their flag is set", () => {
    const template = "[{additional_context}][{additional_instruction}][{requirements}][{research}][{outline}]";
    expect(renderTemplate(template, values, {})).toBe("[][][][][]");
    expect(
      renderTemplate(template, values, {
        include_additional_context: true,
        include_additional_instruction: true,
        include_requirements: true,
        include_research: true,
        include_outline: true,
      }),
    ).toBe("[We sell grinders.][Mention decaf.][REQ][[1] Source one][OUTLINE]");
    expect(renderTemplate(template, values, { include_research: true })).toBe("[][][][[1] Source one][]");
  });

  test("step outputs resolve by position number; a missing step is empty", () => {
    expect(renderTemplate("a={step_1_output} b={step_2_output} c={step_3_output}", values, {})).toBe(
      "a=notes b= c=draft",
    );
    expect(renderTemplate("{step_1_output}", { ...values, step_outputs: { 1: "from record" } }, {})).toBe("from record");
    expect(renderTemplate("[{step_1_output}]", { ...values, step_outputs: undefined }, {})).toBe("[]");
  });

  test("null optional values render empty", () => {
    expect(renderTemplate("[{target_keyword}][{country_targeting}]", { ...values, target_keyword: null, country_targeting: null }, {})).toBe("[][]");
  });

  test("unknown tokens and JSON text are left as written", () => {
    const template = 'Return {"a": 1} or { } with {unknown_thing} and {constructor} for {title}';
    expect(renderTemplate(template, values, {})).toBe(
      'Return {"a": 1} or { } with {unknown_thing} and {constructor} for How to brew coffee',
    );
  });
});

describe("findUnknownVariables", () => {
  test("accepts the whole vocabulary", () => {
    const all =
      "{title}{target_keyword}{article_type}{tone}{point_of_view}{language}{country_targeting}{target_word_count}" +
      "{additional_context}{additional_instruction}{requirements}{research}{outline}{step_1_output}{step_12_output}";
    expect(findUnknownVariables(all)).toEqual([]);
  });

  test("flags unknown names once each, in order", () => {
    expect(findUnknownVariables("{titel} {foo} {titel} {step_0_output} {step_x_output} {toString}")).toEqual([
      "titel",
      "foo",
      "step_0_output",
      "step_x_output",
      "toString",
    ]);
  });

  test("does not flag JSON-looking text", () => {
    expect(findUnknownVariables('Respond like {"title": "x", "items": [1, 2]} or {} or { } or {1}')).toEqual([]);
  });

  test("is case-sensitive: {Title} is not {title}", () => {
    expect(findUnknownVariables("{Title}")).toEqual(["Title"]);
    expect(isTemplateVariable("title")).toBe(true);
    expect(isTemplateVariable("constructor")).toBe(false);
  });
});

describe("stepOutputReferences and gating checks", () => {
  test("lists referenced positions ascending and unique", () => {
    expect(stepOutputReferences("{step_3_output} {step_1_output} {step_3_output} {step_0_output}")).toEqual([1, 3]);
    expect(stepOutputReferences("no refs {title}")).toEqual([]);
  });

  test("reports gated variables whose flag is off", () => {
    expect(gatedVariablesWithoutFlag("{research} {requirements} {title}", { include_research: true })).toEqual([
      "requirements",
    ]);
  });
});

describe("renderRequirements", () => {
  const base: RequirementsInput = {
    target_word_count: 1500,
    tone: "professional",
    point_of_view: "second_person",
    language: "de",
  };

  test("always covers length, tone, point of view and language", () => {
    const text = renderRequirements(base);
    expect(text).toContain("1,500 words");
    expect(text).toContain("Tone: professional.");
    expect(text).toMatch(/businesslike/);
    expect(text).toContain('"you"');
    expect(text).toContain("German (de)");
    expect(text).not.toContain("Market");
    expect(text).not.toContain("FAQ");
    expect(text).not.toContain("Key takeaways");
    expect(text).not.toContain("Brand voice");
  });

  test("each tone and point of view has its own guidance", () => {
    const tones = ["professional", "authoritative", "friendly", "conversational", "casual", "excited", "humorous"];
    const lines = tones.map((tone) => renderRequirements({ ...base, tone }).split("\n").find((l) => l.startsWith("- Tone"))!);
    expect(new Set(lines).size).toBe(tones.length);
    for (const line of lines) expect(line.length).toBeGreaterThan(40);
    const povs = ["first_person", "first_person_plural", "second_person", "third_person"];
    const povLines = povs.map((point_of_view) =>
      renderRequirements({ ...base, point_of_view }).split("\n").find((l) => l.startsWith("- Point of view"))!,
    );
    expect(new Set(povLines).size).toBe(povs.length);
  });

  test("includes optional parts when set", () => {
    const text = renderRequirements({
      ...base,
      country_targeting: "GB",
      target_audience: "small bakery owners",
      target_keyword: "sourdough starter",
      keywords: ["levain", " hydration ", ""],
      include_key_takeaways: true,
      include_faq: true,
      faq_questions: ["How long does a starter last?", "Can I freeze it?"],
      heading_capitalization: "sentence",
      brand_voice: { name: "Crumb & Co", description: "Warm, nerdy about fermentation, never preachy." },
    });
    expect(text).toContain("the United Kingdom (GB)");
    expect(text).toContain("small bakery owners");
    expect(text).toContain('"sourdough starter"');
    expect(text).toContain("levain, hydration.");
    expect(text).toMatch(/Key takeaways.*after the introduction/);
    expect(text).toMatch(/FAQ.*after the conclusion.*4 to 6 questions/);
    expect(text).toContain("- How long does a starter last?");
    expect(text).toContain("- Can I freeze it?");
    expect(text).toContain("sentence case");
    expect(text).toContain('Brand voice "Crumb & Co"');
    expect(text).toContain("never preachy");
  });

  test("title case headings", () => {
    expect(renderRequirements({ ...base, heading_capitalization: "title" })).toContain("Title Case");
  });

  test("unknown enumeration values are named without guidance instead of failing", () => {
    const text = renderRequirements({ ...base, tone: "constructor", language: "xx" });
    expect(text).toContain("- Tone: constructor.\n");
    expect(text).toContain("in xx,");
  });
});

describe("temperatureForTone", () => {
  test("formal tones run cooler than conversational ones, expressive tones hotter", () => {
    const t = temperatureForTone;
    expect(t("professional")).toBeGreaterThanOrEqual(0.4);
    expect(t("professional")).toBeLessThanOrEqual(0.5);
    expect(t("authoritative")).toBeLessThanOrEqual(0.5);
    expect(t("humorous")).toBeGreaterThanOrEqual(0.9);
    expect(t("excited")).toBeGreaterThanOrEqual(0.9);
    for (const formal of ["professional", "authoritative"]) {
      for (const middle of ["friendly", "conversational", "casual"]) {
        expect(t(formal)).toBeLessThan(t(middle));
        for (const expressive of ["excited", "humorous"]) expect(t(middle)).toBeLessThan(t(expressive));
      }
    }
    expect(t("unknown")).toBeGreaterThan(t("professional"));
    expect(t("unknown")).toBeLessThan(t("humorous"));
  });
});
