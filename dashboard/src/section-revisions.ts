// One H2 section of an opened article rewritten, expanded, shortened, regenerated, translated or
// humanized, through the article API's section revisions (POST …/revisions: a new version where
// only that section changed), and the article's revisions with their status. While one is queued
// or running (or one ended after the article shown was read), its end is looked for every two
// seconds and the page then shows the article again (not before: a page redrawn meanwhile would
// take the keyboard's focus away).
import { api } from "./api.ts";
import { errorsOf, field, form, h, say, when } from "./dom.ts";

const ACTIONS = ["rewrite", "expand", "shorten", "regenerate", "translate", "humanize"];
const UNDER_WAY = new Set(["queued", "running"]);
const RECHECK_MS = 2_000;

/** The article whose revisions are being looked at, so a page drawn again starts no second look. */
let watched: number | undefined;

async function reopenWhenEnded(id: number, reopen: () => void): Promise<void> {
  if (watched === id) return;
  watched = id;
  const here = location.hash;
  try {
    while (location.hash === here) {
      await new Promise((resolve) => setTimeout(resolve, RECHECK_MS));
      const again = await api("GET", `/articles/${id}/revisions`);
      if (again.status !== 200 || !again.body.data.revisions.some((r: any) => UNDER_WAY.has(r.status))) {
        if (location.hash === here) reopen();
        return;
      }
    }
  } finally {
    watched = undefined;
  }
}

export async function sectionRevisions(a: { id: number; status: string; current_version_id?: number | null }, reopen: () => void): Promise<HTMLElement | null> {
  if (a.status !== "completed" && a.status !== "published") return null;
  const answer = await api("GET", `/articles/${a.id}/revisions`);
  if (answer.status !== 200) return null;
  const { sections, revisions } = answer.body.data as { sections: any[]; revisions: any[] };
  const rows = revisions.map((r) =>
    h(
      "tr",
      { "data-testid": `revision-${r.number}` },
      h("td", {}, String(r.number)),
      h("td", {}, r.action),
      h("td", {}, `${r.section?.index}. ${r.section?.heading ?? ""}`),
      h("td", {}, r.status),
      h("td", {}, r.failure_reason ?? r.instruction ?? ""),
      h("td", {}, when(r.created_at)),
    ),
  );
  // A revision that ended after the article was read (a fast one, between the page's reads) made
  // a version the page does not show yet: the page is drawn again as for one under way.
  const endedSinceRead = revisions.some((r) => r.status === "completed" && r.version_id !== null && r.version_id > (a.current_version_id ?? 0));
  if (endedSinceRead || revisions.some((r) => UNDER_WAY.has(r.status))) void reopenWhenEnded(a.id, reopen);
  const section = h("select", { name: "section" }, ...sections.map((s) => h("option", { value: String(s.index) }, `${s.index}. ${s.heading} (${s.word_count} words)`)));
  const action = h("select", { name: "action" }, ...ACTIONS.map((name) => h("option", { value: name }, name)));
  const instruction = h("textarea", { name: "instruction", rows: 3, maxlength: 2000 });
  const language = h("input", { name: "language", placeholder: "for translate: en, de, fr…" });
  const revise = form(
    async () => {
      const body = { section: Number(section.value), action: action.value, instruction: instruction.value || undefined, language: language.value || undefined };
      // One key per submission: a retried click of the same form queues it once.
      const queued = await api("POST", `/articles/${a.id}/revisions`, body, { "idempotency-key": crypto.randomUUID() });
      if (queued.status !== 202) return errorsOf(queued.body);
      say(queued.body.message);
      reopen();
    },
    h("h2", {}, "Revise a section"),
    sections.length ? null : h("p", {}, "This article has no H2 sections to revise."),
    field("Section", section),
    field("Action", action),
    field("Instruction", instruction),
    field("Language", language),
    h("button", { type: "submit", disabled: sections.length === 0 }, "Queue the revision"),
  );
  return h(
    "section",
    {},
    revisions.length
      ? h(
          "div",
          {},
          h("h2", {}, "Section revisions"),
          h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Revision", "Action", "Section", "Status", "Note", "Asked"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
        )
      : null,
    revise,
  );
}
