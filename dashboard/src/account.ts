// The signed-in user's settings: the selected account, the password, and (owners and admins)
// the account's audit log.
import { api } from "./api.ts";
import { errorsOf, field, h, say, show, when } from "./dom.ts";
import { manages, state } from "./session.ts";

export async function accountPage(reload: () => Promise<void>): Promise<void> {
  const session = state.session!;
  const choice = h("select", { name: "account" }, ...session.accounts.map((a) => h("option", { value: a.id, selected: a.id === session.current_account?.id }, `${a.name} (${a.role})`)));
  const switcher = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const answer = await api("POST", "/account", { account_id: Number(choice.value) });
        say(answer.status === 200 ? "Account switched." : errorsOf(answer.body));
        await reload();
      },
    },
    h("h2", {}, "Account"),
    field("Show the account", choice),
    h("button", { type: "submit" }, "Switch"),
  );
  const current = h("input", { type: "password", name: "current_password", autocomplete: "current-password", required: true });
  const next = h("input", { type: "password", name: "new_password", autocomplete: "new-password", minlength: 10, required: true });
  const outcome = h("p", { role: "alert" });
  const password = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const answer = await api("POST", "/password", { current_password: current.value, new_password: next.value });
        outcome.className = answer.status === 200 ? "" : "error";
        outcome.textContent = answer.status === 200 ? `Password changed; ${answer.body.data.ended_sessions} other session(s) ended.` : errorsOf(answer.body);
      },
    },
    h("h2", {}, "Password"),
    field("Current password", current),
    field("New password (at least 10 characters)", next),
    h("button", { type: "submit" }, "Change password"),
    outcome,
  );
  let audit: HTMLElement | null = null;
  if (manages()) {
    const events = await api("GET", "/audit");
    audit = h(
      "section",
      {},
      h("h2", {}, "Audit log"),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, ...["When", "Who", "What", "Subject"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, ...(events.body?.data ?? []).map((e: any) => h("tr", {}, h("td", {}, when(e.created_at)), h("td", {}, e.actor?.email ?? "—"), h("td", {}, e.action), h("td", {}, e.subject)))),
        ),
      ),
    );
  }
  show(h("h1", {}, "Settings"), h("p", {}, `Signed in as ${session.user.name} <${session.user.email}>`), switcher, password, audit);
}
