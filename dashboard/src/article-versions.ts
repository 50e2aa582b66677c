// An opened article's life after generation: its content rendered, its versions (restoring an
// earlier one), and editing the content and description, through the same article operations as
// /v1 (a stale base answers 409 and changes nothing).
//
// The rendered content is the article's sanitised HTML, as `GET …/content?format=html` and the
// completion webhook's content.html give it (the service's one sanitiser: no script, no event
// handler attribute, no javascript: link); it is parsed into a detached document and its nodes
// adopted into the page. Everything else (version kinds, who made them) goes in as text.
import { api, apiText } from "./api.ts";
import { errorsOf, field, form, h, say, when } from "./dom.ts";

interface OpenedArticle {
  id: number;
  status: string;
  content: string | null;
  description: string | null;
  current_version_id: number | null;
}

/** The article's content as its sanitised HTML, with its Markdown source under it. */
export async function renderedContent(a: OpenedArticle): Promise<HTMLElement | null> {
  if (!a.content) return null;
  const html = await apiText(`/articles/${a.id}/content?format=html`);
  const rendered = h("div", { class: "article-rendered", "data-testid": "article-rendered" });
  if (html !== null) rendered.append(...new DOMParser().parseFromString(html, "text/html").body.childNodes);
  return h(
    "section",
    {},
    h("h2", {}, "Content"),
    rendered,
    h("details", {}, h("summary", {}, "Markdown source"), h("div", { class: "article-content", "data-testid": "article-content" }, a.content)),
  );
}

const madeBy = (v: any) => (v.made_by?.key_id ? `key ${v.made_by.key_id}` : v.made_by?.workload ? `workload ${v.made_by.workload}` : "the run");

/** The versions, newest first, each but the current one with a Restore button; and the edit form. */
export async function versionsAndEdits(a: OpenedArticle, reopen: () => void): Promise<HTMLElement | null> {
  if (a.status !== "completed" && a.status !== "published") return null;
  const answer = await api("GET", `/articles/${a.id}/versions`);
  if (answer.status !== 200) return null;
  const base = { "if-match": `"${a.current_version_id}"` };
  const restore = async (number: number) => {
    const restored = await api("POST", `/articles/${a.id}/versions/${number}/restore`, undefined, base);
    if (restored.status !== 200) return say(errorsOf(restored.body));
    say(restored.body.message);
    reopen();
  };
  const rows = [...answer.body.data].reverse().map((v: any) =>
    h(
      "tr",
      { "data-testid": `version-${v.number}` },
      h("td", {}, String(v.number)),
      h("td", {}, v.kind),
      h("td", {}, String(v.word_count)),
      h("td", {}, madeBy(v)),
      h("td", {}, when(v.created_at)),
      h("td", {}, v.current ? "current" : h("button", { type: "button", onclick: () => void restore(v.number) }, `Restore version ${v.number}`)),
    ),
  );
  const content = h("textarea", { name: "content", rows: 14 }, a.content ?? "");
  const description = h("input", { name: "description", value: a.description ?? "" });
  const edit = form(
    async () => {
      const edited = await api("PATCH", `/articles/${a.id}`, { content: content.value, description: description.value || null, base_version_id: a.current_version_id });
      if (edited.status !== 200) return edited.status === 409 ? `${errorsOf(edited.body)} Reload the article to edit the current version.` : errorsOf(edited.body);
      say(edited.body.message);
      reopen();
    },
    h("h2", {}, "Edit"),
    field("Content (Markdown)", content),
    field("Meta description", description),
    h("button", { type: "submit" }, "Save as a new version"),
  );
  return h(
    "section",
    {},
    h("h2", {}, "Versions"),
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Version", "Kind", "Words", "Made by", "Created", ""].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    edit,
  );
}
