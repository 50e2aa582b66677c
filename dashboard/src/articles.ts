// Articles: listed with filters, created, and opened with live progress over the event stream.
// Everything an article carries (title, step names, error texts) is put in the page as text; its
// content is shown rendered from the service's sanitised HTML and as its Markdown source (as
// text), with its versions and the edit form (article-versions.ts).
import { api } from "./api.ts";
import { renderedContent, versionsAndEdits } from "./article-versions.ts";
import { sectionRevisions } from "./section-revisions.ts";
import { errorsOf, field, form, h, say, show, when } from "./dom.ts";

const STATUSES = ["queued", "batching", "writing", "polishing", "completed", "published", "failed"];
const TYPES = ["blog_post", "ultimate_guide", "listicle", "product_review", "comparison", "tutorial", "news", "case_study"];
const TONES = ["professional", "authoritative", "friendly", "conversational", "casual", "excited", "humorous"];
const VIEWS = ["first_person", "first_person_plural", "second_person", "third_person"];
const LANGUAGES = ["en", "es", "fr", "de", "it", "pt", "ru", "ja", "ko", "zh"];
const ENDED = new Set(["completed", "published", "failed"]);

const select = (name: string, values: string[], chosen?: string, empty?: string) =>
  h("select", { name }, empty ? h("option", { value: "" }, empty) : null, ...values.map((v) => h("option", { value: v, selected: v === chosen }, v)));

/** What the stream told of each article opened, kept while the page lives so a re-read keeps it. */
const heard = new Map<string, string[]>();

/** The streams of the view (the open article's, or the listed articles' in progress), closed when another view opens. */
const streams = new Set<EventSource>();
export const closeStream = () => {
  for (const stream of streams) stream.close();
  streams.clear();
};

/** At most this many listed articles are followed live at once (each stream counts against the account's open streams). */
const FOLLOWED_IN_LIST = 5;

/** A listed article in progress: its status cell follows the article's event stream. */
function followStatus(id: number, cell: HTMLElement): void {
  if ([...streams].length >= FOLLOWED_IN_LIST) return;
  const stream = new EventSource(`/dashboard/api/articles/${id}/events`);
  streams.add(stream);
  stream.addEventListener("state", (event) => (cell.textContent = JSON.parse((event as MessageEvent).data).status ?? cell.textContent));
  for (const name of ["completed", "failed"]) {
    stream.addEventListener(name, () => {
      cell.textContent = name;
      stream.close();
      streams.delete(stream);
    });
  }
}

export async function articlesPage(query: URLSearchParams): Promise<void> {
  const projects = (await api("GET", "/projects")).body?.data ?? [];
  const list = await api("GET", `/articles?${query}`);
  if (list.status !== 200) return show(h("h1", {}, "Articles"), h("p", { class: "error" }, errorsOf(list.body)));
  const status = select("status", STATUSES, query.get("status") ?? undefined, "any");
  const project = select("project_id", projects.map((p: any) => String(p.id)), query.get("project_id") ?? undefined, "any");
  const filters = form(
    async () => {
      const next = new URLSearchParams();
      if (status.value) next.set("status", status.value);
      if (project.value) next.set("project_id", project.value);
      location.hash = `#/articles?${next}`;
    },
    h("h2", {}, "Filter"),
    field("Status", status),
    field("Project id", project),
    h("button", { type: "submit", class: "secondary" }, "Apply filters"),
  );
  const rows = list.body.data.map((a: any) => {
    const status = h("td", { "data-testid": `status-${a.id}` }, a.status);
    if (!ENDED.has(a.status)) followStatus(a.id, status);
    return h("tr", {}, h("td", {}, h("a", { href: `#/articles/${a.id}` }, a.title)), status, h("td", {}, a.project_id), h("td", {}, a.actual_word_count ?? "—"), h("td", {}, when(a.created_at)));
  });
  const title = h("input", { name: "title", required: true, minlength: 3, maxlength: 255 });
  const newProject = select("project", projects.map((p: any) => String(p.id)));
  // A built-in type or a custom workflow's slug: the built-ins are offered as suggestions.
  const type = h("input", { name: "article_type", list: "article-types", value: "blog_post", required: true });
  const types = h("datalist", { id: "article-types" }, ...TYPES.map((t) => h("option", { value: t })));
  const words = h("input", { name: "target_word_count", type: "number", min: 100, max: 10000, value: 600, required: true });
  const tone = select("tone", TONES, "friendly");
  const view = select("point_of_view", VIEWS, "second_person");
  const language = select("language", LANGUAGES, "en");
  const create = form(
    async () => {
      const answer = await api("POST", "/articles", {
        project_id: Number(newProject.value),
        title: title.value,
        article_type: type.value,
        target_word_count: Number(words.value),
        tone: tone.value,
        point_of_view: view.value,
        language: language.value,
      });
      if (answer.status !== 201) return errorsOf(answer.body);
      say("Article created.");
      location.hash = `#/articles/${answer.body.data.id}`;
    },
    h("h2", {}, "Create an article"),
    field("Title", title),
    field("Project", newProject),
    field("Article type (built-in or a custom workflow's slug)", type),
    types,
    field("Target word count", words),
    field("Tone", tone),
    field("Point of view", view),
    field("Language", language),
    h("button", { type: "submit" }, "Create article"),
  );
  show(
    h("h1", {}, "Articles"),
    filters,
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Title", "Status", "Project", "Words", "Created"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    create,
  );
}

export async function articlePage(id: string): Promise<void> {
  const answer = await api("GET", `/articles/${encodeURIComponent(id)}`);
  if (answer.status !== 200) return show(h("h1", {}, "Article"), h("p", { class: "error" }, errorsOf(answer.body)));
  const a = answer.body.data;
  const status = h("strong", { "data-testid": "article-status" }, a.status);
  const cost = h("span", {}, a.cost ?? "0.00");
  const progress = h("ul", { "aria-live": "polite", "data-testid": "progress" }, ...(heard.get(id) ?? []).map((text) => h("li", {}, text)));
  const steps = ENDED.has(a.status) ? await api("GET", `/articles/${encodeURIComponent(id)}/steps`) : null;
  show(
    h("h1", { "data-testid": "article-title" }, a.title),
    h("p", {}, "Status: ", status, " · cost so far (USD): ", cost),
    a.error_message ? h("p", { class: "error" }, a.error_message) : null,
    progress,
    await renderedContent(a),
    steps?.status === 200
      ? h(
          "section",
          {},
          h("h2", {}, "Steps and costs"),
          h(
            "div",
            { class: "table-wrap" },
            h("table", {}, h("thead", {}, h("tr", {}, ...["Step", "Model", "Tokens in / out", "Cost (USD)"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...(steps.body.data.steps ?? []).map((s: any) => h("tr", {}, h("td", {}, `${s.step_number}. ${s.step_name}`), h("td", {}, s.model), h("td", {}, `${s.prompt_tokens} / ${s.completion_tokens}`), h("td", {}, s.cost))))),
          ),
        )
      : null,
    (a.sources ?? []).length ? h("section", {}, h("h2", {}, "Sources"), h("ul", {}, ...a.sources.map((s: any) => h("li", {}, `${s.title ?? ""} ${s.url ?? ""}`.trim())))) : null,
  );
  if (a.status === "completed" || a.status === "published") await offerPublishing(a);
  const versions = await versionsAndEdits(a, () => void articlePage(id));
  if (versions) document.getElementById("main")!.appendChild(versions);
  const revisions = await sectionRevisions(a, () => void articlePage(id));
  if (revisions) document.getElementById("main")!.appendChild(revisions);
  if (ENDED.has(a.status)) return;
  closeStream();
  // Live progress: each event shown as text; the article is read again once it ends.
  const stream = new EventSource(`/dashboard/api/articles/${encodeURIComponent(id)}/events`);
  streams.add(stream);
  const notes = heard.get(id) ?? [];
  heard.set(id, notes);
  const note = (text: string) => {
    notes.push(text);
    progress.appendChild(h("li", {}, text));
  };
  stream.addEventListener("state", (event) => {
    const data = JSON.parse((event as MessageEvent).data);
    status.textContent = data.status ?? status.textContent;
    cost.textContent = data.cost ?? cost.textContent;
    note(`Status: ${data.status}`);
  });
  for (const name of ["step_started", "step_finished"]) stream.addEventListener(name, (event) => note(`${name.replace("_", " ")}: ${JSON.parse((event as MessageEvent).data).name ?? ""}`));
  for (const name of ["completed", "failed", "published"]) {
    stream.addEventListener(name, () => {
      closeStream();
      if (location.hash === `#/articles/${id}`) void articlePage(id);
    });
  }
}

/** A finished article is published to one of its project's destinations (queued; progress shows on the article). */
async function offerPublishing(a: { id: number; project: { id: number } }): Promise<void> {
  const destinations = (await api("GET", `/projects/${a.project.id}/destinations`)).body?.data ?? [];
  if (!destinations.length) return;
  const target = h("select", { name: "destination_id" }, ...destinations.map((d: any) => h("option", { value: d.id }, `${d.name} (${d.kind})`)));
  const publish = form(
    async () => {
      const answer = await api("POST", `/articles/${a.id}/publish`, { destination_id: Number(target.value) });
      if (answer.status !== 202) return errorsOf(answer.body);
      say("Publication queued.");
    },
    h("h2", {}, "Publish"),
    field("Destination", target),
    h("button", { type: "submit" }, "Publish"),
  );
  document.getElementById("main")!.appendChild(publish);
}
