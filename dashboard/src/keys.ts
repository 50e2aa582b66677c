// API keys: listed by name and prefix (never a token), created with a scope and shown once,
// revoked, rolled.
import { api } from "./api.ts";
import { errorsOf, field, form, h, say, show, when } from "./dom.ts";

interface Key {
  id: number;
  name: string;
  prefix: string;
  creator: { name: string; email: string } | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  scope: { account_only: boolean; project_ids: number[]; read_only: boolean } | null;
}

const statusOf = (k: Key) => (k.revoked_at ? "revoked" : k.expires_at && new Date(k.expires_at) <= new Date() ? "expired" : "active");

function scopeText(k: Key): string {
  if (!k.scope) return "all of its user's projects";
  const parts = [k.scope.project_ids.length ? `projects ${k.scope.project_ids.join(", ")}` : k.scope.account_only ? "this account" : "all of its user's projects"];
  if (k.scope.read_only) parts.push("read-only");
  return parts.join(", ");
}

/** The token of a key just made, shown this once. */
function shownOnce(name: string, token: string) {
  return h(
    "div",
    { class: "notice", role: "alert" },
    h("p", {}, `Key "${name}" created. Copy its token now: it is not shown again.`),
    h("code", { class: "secret", "data-testid": "new-token" }, token),
  );
}

export async function keysPage(): Promise<void> {
  const [keys, projects] = await Promise.all([api<{ data: Key[] }>("GET", "/keys"), api<{ data: { id: number; name: string }[] }>("GET", "/projects")]);
  if (keys.status !== 200) return show(h("h1", {}, "API keys"), h("p", { class: "error" }, errorsOf(keys.body)));
  const created = h("div");
  const grace = h("select", { name: "grace" }, ...[["0", "at once"], ["3600", "after 1 hour"], ["86400", "after 24 hours"], ["604800", "after 7 days"]].map(([v, t]) => h("option", { value: v }, t)));
  const rows = keys.body.data.map((k) =>
    h(
      "tr",
      {},
      h("td", {}, k.name || "(unnamed)"),
      h("td", {}, h("code", {}, `${k.prefix}…`)),
      h("td", {}, k.creator ? `${k.creator.name} <${k.creator.email}>` : "—"),
      h("td", {}, when(k.created_at)),
      h("td", {}, when(k.last_used_at)),
      h("td", {}, k.expires_at ? when(k.expires_at) : "never"),
      h("td", {}, scopeText(k)),
      h("td", {}, statusOf(k)),
      h(
        "td",
        {},
        statusOf(k) === "active" &&
          h("button", {
            type: "button", class: "danger", "aria-label": `Revoke key ${k.name || k.prefix}`,
            onclick: async () => {
              const answer = await api("POST", `/keys/${k.id}/revoke`);
              await keysPage();
              say(answer.status === 200 ? `Key ${k.name} revoked.` : errorsOf(answer.body));
            },
          }, "Revoke"),
        " ",
        statusOf(k) === "active" &&
          h("button", {
            type: "button", class: "secondary", "aria-label": `Roll key ${k.name || k.prefix}`,
            onclick: async () => {
              const answer = await api("POST", `/keys/${k.id}/roll`, { grace_seconds: Number(grace.value) });
              await keysPage();
              if (answer.status === 201) document.getElementById("created-key")!.replaceChildren(shownOnce(answer.body.data.name, answer.body.data.token));
              else say(errorsOf(answer.body));
            },
          }, "Roll"),
      ),
    ),
  );
  const name = h("input", { name: "name", required: true, maxlength: 100 });
  const expires = h("input", { name: "expires", type: "date" });
  const reach = h("select", { name: "reach" }, h("option", { value: "all" }, "All projects its user can see"), h("option", { value: "account" }, "This account's projects only"), h("option", { value: "projects" }, "The projects ticked below"));
  const boxes = (projects.body?.data ?? []).map((p) => ({ id: p.id, box: h("input", { type: "checkbox", name: "project", value: p.id }) as HTMLInputElement, name: p.name }));
  const readOnly = h("input", { type: "checkbox", name: "read_only" });
  const create = form(
    async () => {
      const projectIds = reach.value === "projects" ? boxes.filter((b) => b.box.checked).map((b) => b.id) : [];
      const scope = reach.value === "all" && !readOnly.checked ? null : { account_only: reach.value === "account", project_ids: projectIds, read_only: readOnly.checked };
      const body = { name: name.value, expires_at: expires.value ? new Date(`${expires.value}T23:59:59Z`).toISOString() : null, scope };
      const answer = await api("POST", "/keys", body);
      if (answer.status !== 201) return errorsOf(answer.body);
      await keysPage();
      document.getElementById("created-key")!.replaceChildren(shownOnce(answer.body.data.name, answer.body.data.token));
      say("Key created.");
    },
    h("h2", {}, "Create a key"),
    field("Name", name),
    field("Expires on (optional)", expires),
    field("Reach", reach),
    boxes.length ? h("fieldset", {}, h("legend", {}, "Projects"), ...boxes.map((b) => h("label", { class: "inline" }, b.box, b.name))) : null,
    h("label", { class: "inline" }, readOnly, "Read-only"),
    h("button", { type: "submit" }, "Create key"),
  );
  created.id = "created-key";
  show(
    h("h1", {}, "API keys"),
    created,
    h("div", { class: "table-wrap" }, h("table", {}, h("caption", { class: "muted" }, "Keys of this account"), h("thead", {}, h("tr", {}, ...["Name", "Prefix", "Creator", "Created", "Last used", "Expires", "Reach", "Status", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    field("A rolled key's old token stops working", grace),
    create,
  );
}
