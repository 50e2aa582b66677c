// A project's custom workflows: steps created, edited, reordered, duplicated and deleted, each
// with its icon name; and the project's publishing destinations. The same handlers as
// /v1/projects/{project}/workflows and /destinations answer.
import { api } from "./api.ts";
import { errorsOf, field, form, h, say, show } from "./dom.ts";

interface Step {
  id: number;
  step_number: number;
  step_name: string;
  step_icon: string | null;
  output_format: string;
  system: string;
  user: string;
}

const FORMATS = ["markdown", "text", "json"];

/** The project the page shows: chosen in its selector, the first one reached otherwise. */
export async function projectChoice(path: string, rest: string, render: (project: number) => Promise<void>) {
  const projects: { id: number; name: string }[] = (await api("GET", "/projects")).body?.data ?? [];
  const chosen = Number(new URLSearchParams(rest.replace(/^\?/, "")).get("project")) || projects[0]?.id;
  const picker = h("select", { name: "project", onchange: (e: Event) => (location.hash = `#/${path}?project=${(e.target as HTMLSelectElement).value}`) }, ...projects.map((p) => h("option", { value: p.id, selected: p.id === chosen }, `${p.name} (${p.id})`)));
  return { chosen, picker: field("Project", picker), none: !projects.length, render: () => render(chosen!) };
}

function stepRow(project: number, step: Step, steps: Step[]) {
  const move = (by: number) => async () => {
    const other = steps.find((s) => s.step_number === step.step_number + by);
    if (!other) return;
    // Two steps swap places in one reorder (a step number stays unique within the workflow).
    const answer = await api("POST", `/projects/${project}/workflows/reorder`, { steps: [{ id: step.id, step_number: other.step_number }, { id: other.id, step_number: step.step_number }] });
    await workflowsPage(`?project=${project}`);
    say(answer.status === 200 ? `${step.step_name} moved.` : errorsOf(answer.body));
  };
  const name = h("input", { name: `name-${step.id}`, value: step.step_name, "aria-label": `Name of step ${step.step_number}` });
  const icon = h("input", { name: `icon-${step.id}`, value: step.step_icon ?? "", "aria-label": `Icon of step ${step.step_number}` });
  const button = (label: string, action: () => Promise<void>, cls = "secondary") => h("button", { type: "button", class: cls, "aria-label": `${label} step ${step.step_number}`, onclick: action }, label);
  return h(
    "tr",
    {},
    h("td", {}, step.step_number),
    h("td", {}, name),
    h("td", {}, icon),
    h("td", {}, step.output_format),
    h(
      "td",
      {},
      button("Save", async () => {
        const answer = await api("PATCH", `/projects/${project}/workflows/${step.id}`, { step_name: name.value, step_icon: icon.value || null });
        say(answer.status === 200 ? `Step ${step.step_number} saved.` : errorsOf(answer.body));
      }),
      " ",
      button("Move up", move(-1)),
      " ",
      button("Move down", move(1)),
      " ",
      button("Delete", async () => {
        const answer = await api("DELETE", `/projects/${project}/workflows/${step.id}`);
        await workflowsPage(`?project=${project}`);
        say(answer.status === 200 ? answer.body.message : errorsOf(answer.body));
      }, "danger"),
    ),
  );
}

export async function workflowsPage(rest: string): Promise<void> {
  const choice = await projectChoice("workflows", rest, async () => {});
  if (choice.none) return show(h("h1", {}, "Custom workflows"), h("p", {}, "No project to show."));
  const project = choice.chosen!;
  const list = await api("GET", `/projects/${project}/workflows?per_page=100`);
  if (list.status !== 200) return show(h("h1", {}, "Custom workflows"), choice.picker, h("p", { class: "error" }, errorsOf(list.body)));
  const workflows = list.body.data.map((w: any) =>
    h(
      "section",
      {},
      h("h2", {}, w.slug),
      h(
        "div",
        { class: "table-wrap" },
        h("table", {}, h("thead", {}, h("tr", {}, ...["#", "Name", "Icon", "Output", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...w.steps.map((s: Step) => stepRow(project, s, w.steps)))),
      ),
    ),
  );
  const type = h("input", { name: "article_type", required: true });
  const number = h("input", { name: "step_number", type: "number", min: 1, value: 1, required: true });
  const name = h("input", { name: "step_name", required: true });
  const icon = h("input", { name: "step_icon" });
  const system = h("textarea", { name: "system", required: true, rows: 3 });
  const user = h("textarea", { name: "user", required: true, rows: 3 });
  const format = h("select", { name: "output_format" }, ...FORMATS.map((f) => h("option", { value: f }, f)));
  const create = form(
    async () => {
      const answer = await api("POST", `/projects/${project}/workflows`, {
        article_type: type.value,
        step_number: Number(number.value),
        step_name: name.value,
        step_icon: icon.value || null,
        system: system.value,
        user: user.value,
        output_format: format.value,
      });
      if (answer.status !== 201) return errorsOf(answer.body);
      say(`Step ${answer.body.data.step_name} created.`);
      await workflowsPage(`?project=${project}`);
    },
    h("h2", {}, "Add a step"),
    field("Workflow (article type slug)", type),
    field("Step number", number),
    field("Step name", name),
    field("Icon name (optional)", icon),
    field("System prompt", system),
    field("User prompt", user),
    field("Output format", format),
    h("button", { type: "submit" }, "Add step"),
  );
  const source = h("input", { name: "source_article_type", required: true });
  const copy = h("input", { name: "new_article_type", required: true });
  const duplicate = form(
    async () => {
      const answer = await api("POST", `/projects/${project}/workflows/duplicate`, { source_article_type: source.value, new_article_type: copy.value });
      if (answer.status !== 201) return errorsOf(answer.body);
      say(`Workflow ${copy.value} created.`);
      await workflowsPage(`?project=${project}`);
    },
    h("h2", {}, "Duplicate a workflow"),
    field("Copy of (a custom or built-in type)", source),
    field("New article type", copy),
    h("button", { type: "submit" }, "Duplicate"),
  );
  show(h("h1", {}, "Custom workflows"), choice.picker, ...(workflows.length ? workflows : [h("p", {}, "No custom workflow yet.")]), create, duplicate);
}

export async function destinationsPage(rest: string): Promise<void> {
  const choice = await projectChoice("destinations", rest, async () => {});
  if (choice.none) return show(h("h1", {}, "Destinations"), h("p", {}, "No project to show."));
  const project = choice.chosen!;
  const list = await api("GET", `/projects/${project}/destinations`);
  if (list.status !== 200) return show(h("h1", {}, "Destinations"), choice.picker, h("p", { class: "error" }, errorsOf(list.body)));
  const rows = list.body.data.map((d: any) =>
    h(
      "tr",
      {},
      h("td", {}, d.name),
      h("td", {}, d.kind),
      h("td", {}, d.site_url),
      h(
        "td",
        {},
        h("button", { type: "button", class: "secondary", "aria-label": `Check ${d.name}`, onclick: async () => {
          const answer = await api("POST", `/projects/${project}/destinations/${d.id}/check`);
          say(answer.status === 200 ? `${d.name}: ${answer.body.data.ok ? "the connection works." : answer.body.data.problems.join(" ")}` : errorsOf(answer.body));
        } }, "Check"),
        " ",
        h("button", { type: "button", class: "danger", "aria-label": `Delete ${d.name}`, onclick: async () => {
          const answer = await api("DELETE", `/projects/${project}/destinations/${d.id}`);
          await destinationsPage(`?project=${project}`);
          say(answer.status === 200 ? answer.body.message : errorsOf(answer.body));
        } }, "Delete"),
      ),
    ),
  );
  const kind = h("select", { name: "kind" }, h("option", { value: "wordpress" }, "WordPress"), h("option", { value: "ghost" }, "Ghost"));
  const name = h("input", { name: "name", required: true });
  const site = h("input", { name: "site_url", type: "url", required: true });
  const username = h("input", { name: "username", autocomplete: "off" });
  const secret = h("input", { name: "secret", type: "password", autocomplete: "off" });
  const add = form(
    async () => {
      const body: Record<string, string> = { kind: kind.value, name: name.value, site_url: site.value };
      if (kind.value === "wordpress") Object.assign(body, { username: username.value, application_password: secret.value });
      else body.admin_api_key = secret.value;
      const answer = await api("POST", `/projects/${project}/destinations`, body);
      if (answer.status !== 201) return errorsOf(answer.body);
      await destinationsPage(`?project=${project}`);
      say(`Destination ${answer.body.data.name} added.`);
    },
    h("h2", {}, "Add a destination"),
    field("Kind", kind),
    field("Name", name),
    field("Site address", site),
    field("WordPress username", username),
    field("Application password (WordPress) or Admin API key (Ghost), write-only", secret),
    h("button", { type: "submit" }, "Add destination"),
  );
  show(
    h("h1", {}, "Destinations"),
    choice.picker,
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "Kind", "Site", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    add,
  );
}
