// The account's members: invited by email address (a new user's one-time link shown to the
// inviter, and mailed when the service has mail), their role and access to each project (the
// role's, view only, or none) changed, removed. Owners and admins only.
import { api } from "./api.ts";
import { errorsOf, field, form, h, say, show } from "./dom.ts";

const ROLES = ["viewer", "editor", "admin", "owner"];

interface Member {
  user: { id: number; name: string; email: string };
  role: string;
  project_ids: number[];
  view_only_project_ids: number[];
  has_password: boolean;
}

type Project = { id: number; name: string };

const NO_PROJECT = "A member reaches at least one project: give them access to one, or remove them.";
type ProjectAccess = "role" | "view" | "none";

/** A member's access to one project: what the role grants, view only, or none. */
function accessOf(m: Pick<Member, "project_ids" | "view_only_project_ids"> | undefined, projectId: number): ProjectAccess {
  if (!m) return "role";
  if (m.project_ids.length && !m.project_ids.includes(projectId)) return "none";
  return m.view_only_project_ids.includes(projectId) ? "view" : "role";
}

/** One select per project; `read()` gives the membership's project_ids and view_only_project_ids. */
function projectAccess(projects: Project[], whose: string, member?: Member) {
  const selects = projects.map((p) => {
    const value = accessOf(member, p.id);
    const select = h(
      "select",
      { name: `access-${p.id}`, "aria-label": `Access of ${whose} to ${p.name}` },
      h("option", { value: "role", selected: value === "role" }, "as the role allows"),
      h("option", { value: "view", selected: value === "view" }, "view only"),
      h("option", { value: "none", selected: value === "none" }, "no access"),
    );
    return { project: p, select };
  });
  /** Undefined when every project is set to no access, which a membership cannot say (no list reaches all). */
  const read = () => {
    const reached = selects.filter((s) => s.select.value !== "none");
    if (selects.length && !reached.length) return undefined;
    return {
      // Every project reached: no limit (projects made later are reached too).
      project_ids: reached.length === selects.length ? [] : reached.map((s) => s.project.id),
      view_only_project_ids: selects.filter((s) => s.select.value === "view").map((s) => s.project.id),
    };
  };
  return { selects, read };
}

const roleSelect = (name: string, value: string) => h("select", { name }, ...ROLES.map((r) => h("option", { value: r, selected: r === value }, r)));


export async function membersPage(): Promise<void> {
  const [members, projects] = await Promise.all([api<{ data: Member[] }>("GET", "/members"), api<{ data: { id: number; name: string }[] }>("GET", "/projects")]);
  if (members.status !== 200) return show(h("h1", {}, "Members"), h("p", { class: "error" }, errorsOf(members.body)));
  const projectList: Project[] = projects.body?.data ?? [];
  const rows = members.body.data.map((m) => {
    const role = roleSelect(`role-${m.user.id}`, m.role);
    role.setAttribute("aria-label", `Role of ${m.user.email}`);
    const access = projectAccess(projectList, m.user.email, m);
    return h(
      "tr",
      {},
      h("td", {}, m.user.name),
      h("td", {}, m.user.email),
      h("td", {}, role),
      h("td", {}, ...access.selects.map((a) => h("div", {}, h("span", { class: "muted" }, `${a.project.name}: `), a.select))),
      h("td", {}, m.has_password ? "signed up" : "invited"),
      h(
        "td",
        {},
        h("button", {
          type: "button", class: "secondary", "aria-label": `Save role of ${m.user.email}`,
          onclick: async () => {
            const chosen = access.read();
            if (!chosen) return say(NO_PROJECT);
            const answer = await api("PATCH", `/members/${m.user.id}`, { role: role.value, ...chosen });
            say(answer.status === 200 ? `Role and access of ${m.user.email} saved.` : errorsOf(answer.body));
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
  const access = projectAccess(projectList, "the invitee");
  const result = h("div", { id: "invite-result" });
  const invite = form(
    async () => {
      const chosen = access.read();
      if (!chosen) return NO_PROJECT;
      const answer = await api("POST", "/members", { email: email.value, name: name.value, role: role.value, ...chosen });
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
          answer.body.data.mailed ? h("p", {}, "An invitation with a link of its own is mailed to them too; whichever link is used first ends the other.") : null,
        ),
      );
    },
    h("h2", {}, "Invite a member"),
    field("Email", email),
    field("Name (optional)", name),
    field("Role (viewer: view only; editor, admin, owner: view and update)", role),
    access.selects.length ? h("fieldset", {}, h("legend", {}, "Access to each project"), ...access.selects.map((a) => h("label", { class: "inline" }, `${a.project.name} `, a.select))) : null,
    h("button", { type: "submit" }, "Invite"),
  );
  show(
    h("h1", {}, "Members"),
    result,
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "Email", "Role", "Project access", "State", "Actions"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    invite,
  );
}
