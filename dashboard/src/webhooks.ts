// A project's webhook endpoints: added with an event filter (the signing secret shown once),
// enabled or disabled, given a new secret, sent a test event, deleted; and each endpoint's
// delivery log (attempts with time, status, latency and the receiver's answer) with redelivery.
// The same handlers as /v1/projects/{project}/webhook-endpoints answer.
import { api } from "./api.ts";
import { errorsOf, field, form, h, say, show, when } from "./dom.ts";
import { projectChoice } from "./workflows.ts";

const EVENTS = ["article.completed", "article.failed", "article.published", "article.version_created", "quota.low"];

interface Endpoint {
  id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
}

interface Attempt {
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  succeeded: boolean;
  redelivery: boolean;
}

interface Delivery {
  id: number;
  event_type: string;
  event_id: string;
  state: string;
  created_at: string;
  attempts: Attempt[];
}

/** A secret just made, shown this once. */
function shownOnce(what: string, secret: string) {
  return h(
    "div",
    { class: "notice", role: "alert" },
    h("p", {}, `${what} Copy its signing secret now: it is not shown again.`),
    h("code", { class: "secret", "data-testid": "new-secret" }, secret),
  );
}

function deliveryTable(project: number, endpoint: Endpoint, deliveries: Delivery[]) {
  if (deliveries.length === 0) return h("p", { class: "muted" }, "No deliveries yet.");
  const rows = deliveries.flatMap((d) => {
    const attempts = d.attempts.length ? d.attempts : [null];
    return attempts.map((a, i) =>
      h(
        "tr",
        { "data-delivery": d.id },
        h("td", {}, i === 0 ? d.event_type : ""),
        h("td", {}, i === 0 ? d.state : ""),
        h("td", {}, a ? when(a.attempted_at) : "waiting"),
        h("td", {}, a ? (a.status_code ?? "no answer") : "—"),
        h("td", {}, a ? `${a.duration_ms} ms` : "—"),
        h("td", {}, a ? (a.error ?? a.response_excerpt ?? "") : "", a?.redelivery ? " (redelivery)" : ""),
        h(
          "td",
          {},
          i === 0
            ? h("button", {
                type: "button",
                class: "secondary",
                "aria-label": `Redeliver ${d.event_type} delivery ${d.id}`,
                onclick: async () => {
                  const answer = await api("POST", `/projects/${project}/webhook-endpoints/${endpoint.id}/deliveries/${d.id}/redeliver`);
                  say(answer.status === 202 ? "Redelivery queued." : errorsOf(answer.body));
                },
              }, "Redeliver")
            : "",
        ),
      ),
    );
  });
  return h(
    "div",
    { class: "table-wrap" },
    h("table", {}, h("caption", {}, `Deliveries to ${endpoint.url}, newest first`), h("thead", {}, h("tr", {}, ...["Event", "State", "Attempted", "Status", "Latency", "Answer", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows)),
  );
}

/** One endpoint's page: its delivery log, refreshed on request. */
async function endpointDeliveriesPage(project: number, endpointId: string): Promise<void> {
  const [one, log] = await Promise.all([api("GET", `/projects/${project}/webhook-endpoints/${endpointId}`), api("GET", `/projects/${project}/webhook-endpoints/${endpointId}/deliveries?limit=50`)]);
  const back = h("p", {}, h("a", { href: `#/webhooks?project=${project}` }, "Back to the endpoints"));
  if (one.status !== 200 || log.status !== 200) return show(h("h1", {}, "Deliveries"), back, h("p", { class: "error" }, errorsOf(one.status !== 200 ? one.body : log.body)));
  const endpoint: Endpoint = one.body.data;
  show(
    h("h1", {}, "Deliveries"),
    back,
    h("p", {}, endpoint.url, " — ", endpoint.events.join(", ")),
    h("button", { type: "button", class: "secondary", onclick: () => endpointDeliveriesPage(project, endpointId).then(() => say("Deliveries refreshed.")) }, "Refresh deliveries"),
    deliveryTable(project, endpoint, log.body.data),
  );
}

export async function webhooksPage(rest: string): Promise<void> {
  const params = new URLSearchParams(rest.replace(/^\?/, ""));
  const choice = await projectChoice("webhooks", rest, async () => {});
  if (choice.none) return show(h("h1", {}, "Webhook endpoints"), h("p", {}, "No project to show."));
  const project = choice.chosen!;
  const endpointId = params.get("endpoint");
  if (endpointId) return endpointDeliveriesPage(project, endpointId);
  const list = await api("GET", `/projects/${project}/webhook-endpoints`);
  if (list.status !== 200) return show(h("h1", {}, "Webhook endpoints"), choice.picker, h("p", { class: "error" }, errorsOf(list.body)));
  const secretShown = h("div");
  const again = () => webhooksPage(`?project=${project}`);
  const rows = (list.body.data as Endpoint[]).map((e) =>
    h(
      "tr",
      {},
      h("td", {}, e.url, e.description ? h("div", { class: "muted" }, e.description) : null),
      h("td", {}, e.events.join(", ")),
      h("td", {}, e.enabled ? "enabled" : "disabled"),
      h(
        "td",
        {},
        h("button", { type: "button", "aria-label": `Send a test event to ${e.url}`, onclick: async () => {
          const answer = await api("POST", `/projects/${project}/webhook-endpoints/${e.id}/test`);
          say(answer.status === 202 ? "Test event queued: its delivery shows under Deliveries." : errorsOf(answer.body));
        } }, "Send test event"),
        " ",
        h("a", { href: `#/webhooks?project=${project}&endpoint=${encodeURIComponent(e.id)}`, "aria-label": `Deliveries of ${e.url}` }, "Deliveries"),
        " ",
        h("button", { type: "button", class: "secondary", "aria-label": `${e.enabled ? "Disable" : "Enable"} ${e.url}`, onclick: async () => {
          const answer = await api("PATCH", `/projects/${project}/webhook-endpoints/${e.id}`, { enabled: !e.enabled });
          await again();
          say(answer.status === 200 ? `Endpoint ${answer.body.data.enabled ? "enabled" : "disabled"}.` : errorsOf(answer.body));
        } }, e.enabled ? "Disable" : "Enable"),
        " ",
        h("button", { type: "button", class: "secondary", "aria-label": `New signing secret for ${e.url}`, onclick: async () => {
          const answer = await api("POST", `/projects/${project}/webhook-endpoints/${e.id}/roll-secret`);
          if (answer.status !== 200) return say(errorsOf(answer.body));
          await again();
          document.getElementById("secret-shown")?.replaceChildren(shownOnce("New secret made; the old one no longer signs.", answer.body.data.secret));
        } }, "Roll secret"),
        " ",
        h("button", { type: "button", class: "danger", "aria-label": `Delete ${e.url}`, onclick: async () => {
          const answer = await api("DELETE", `/projects/${project}/webhook-endpoints/${e.id}`);
          await again();
          say(answer.status === 200 ? answer.body.message : errorsOf(answer.body));
        } }, "Delete"),
      ),
    ),
  );
  const url = h("input", { name: "url", type: "url", required: true, autocomplete: "off" });
  const description = h("input", { name: "description", maxlength: 200 });
  const boxes = EVENTS.map((event) => h("input", { type: "checkbox", name: "events", value: event, checked: event === "article.completed" }));
  const add = form(
    async () => {
      const events = boxes.filter((b) => b.checked).map((b) => b.value);
      const answer = await api("POST", `/projects/${project}/webhook-endpoints`, { url: url.value, description: description.value, events });
      if (answer.status !== 201) return errorsOf(answer.body);
      await again();
      document.getElementById("secret-shown")?.replaceChildren(shownOnce(`Endpoint ${answer.body.data.url} added.`, answer.body.data.secret));
      say("Endpoint added.");
    },
    h("h2", {}, "Add an endpoint"),
    field("Endpoint URL", url),
    field("Description", description),
    h("fieldset", {}, h("legend", {}, "Events"), ...boxes.map((box) => h("label", { class: "inline" }, box, h("span", {}, box.value)))),
    h("button", { type: "submit" }, "Add endpoint"),
  );
  secretShown.id = "secret-shown";
  show(
    h("h1", {}, "Webhook endpoints"),
    choice.picker,
    h("p", { class: "muted" }, "Each delivery is signed with the endpoint's own Standard Webhooks secret (webhook-id, webhook-timestamp and webhook-signature headers). An article's own webhook_url is apart and unsigned."),
    secretShown,
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Endpoint", "Events", "State", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    add,
  );
}
