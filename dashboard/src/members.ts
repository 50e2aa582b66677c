// The account's members: invited by email address (a new user's one-time link shown to the
// inviter), their role and project limit changed, removed. Owners and admins only.
import { api } from "./api.ts";
import { errorsOf, field, form, h, say, show } from "./dom.ts";

const ROLES = ["viewer", "editor", "admin", "owner"];

interface Member {
  user: { id: number; name: string; email: string };
  role: string;
  project_ids: number[];
  has_password: boolean;
}

const roleSelect = (name: string, value: string) => h("select", { name }, ...ROLES.map((r) => h("option", { value: r, selected: r === value }, r)));

function projectBoxes(projects: { id: number; name: string }[], chosen: number[]) {
  return projects.map((p) => ({ id: p.id, name: p.name, box: h("input", { type: "checkbox", value: p.id, checked: chosen.includes(p.id) }) as HTMLInputElement }));
}

export async function membersPage(): Promise<void> {
  const [members, projects] = await Promise.all([api<{ data: Member[] }>("GET", "/members"), api<{ data: { id: number; name: string }[] }>("GET", "/projects")]);
  if (members.status !== 200) return show(h("h1", {}, "Members"), h("p", { class: "error" }, errorsOf(members.body)));
  const projectList = projects.body?.data ?? [];
  const rows = members.body.data.map((m) => {
    const role = roleSelect(`role-${m.user.id}`, m.role);
    role.setAttribute("aria-label", `Role of ${m.user.email}`);
    return h(
      "tr",
      {},
      h("td", {}, m.user.name),
      h("td", {}, m.user.email),
      h("td", {}, role),
      h("td", {}, m.project_ids.length ? m.project_ids.join(", ") : "all"),
      h("td", {}, m.has_password ? "signed up" : "invited"),
      h(
        "td",
        {},
        h("button", {
          type: "button", class: "secondary", "aria-label": `Save role of ${m.user.email}`,
          onclick: async () => {
            const answer = await api("PATCH", `/members/${m.user.id}`, { role: role.value, project_ids: m.project_ids });
            say(answer.status === 200 ? `Role of ${m.user.email} saved.` : errorsOf(answer.body));
          },
        }, "Save"),
        " ",
        h("button", {
          type: "button", class: "danger", "aria-label": `Remove ${m.user.email}`,
          onclick: async () => {
            const answer = await api("DELETE", `/members/${m.user.id}`);
            await membersPage();
            say(answer.status === 200 ? `${m.user.email} removed.` : errorsOf(answer.body));
          },
        }, "Remove"),
      ),
    );
  });
  const email = h("input", { type: "email", name: "email", required: true });
  const name = h("input", { name: "name" });
  const role = roleSelect("role", "viewer");
  const boxes = projectBoxes(projectList, []);
  const result = h("div", { id: "invite-result" });
  const invite = form(
    async () => {
      const answer = await api("POST", "/members", { email: email.value, name: name.value, role: role.value, project_ids: boxes.filter((b) => b.box.checked).map((b) => b.id) });
      if (answer.status !== 201) return errorsOf(answer.body);
      const link = answer.body.data.sign_in_link as string | null;
      await membersPage();
      document.getElementById("invite-result")!.replaceChildren(
        h(
          "div",
          { class: "notice", role: "alert" },
          h("p", {}, `${answer.body.data.user.email} is now a member.`),
          link ? h("p", {}, "Give them this one-time link to set a password (it works once, for 72 hours):") : h("p", {}, "They already have a password and can sign in."),
          link ? h("code", { class: "secret", "data-testid": "invite-link" }, link) : null,
        ),
      );
    },
    h("h2", {}, "Invite a member"),
    field("Email", email),
    field("Name (optional)", name),
    field("Role (viewer: view only; editor, admin, owner: view and update)", role),
    boxes.length ? h("fieldset", {}, h("legend", {}, "Only these projects (none ticked: every project)"), ...boxes.map((b) => h("label", { class: "inline" }, b.box, b.name))) : null,
    h("button", { type: "submit" }, "Invite"),
  );
  show(
    h("h1", {}, "Members"),
    result,
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "Email", "Role", "Projects", "State", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    invite,
  );
}
