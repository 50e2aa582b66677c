// The dashboard: one page, its views chosen by the address's fragment (#/keys, #/usage, …). The
// session is an HttpOnly cookie the script never sees; the CSRF token comes from the session
// answer and is kept in memory only.
import { api, setCsrfToken } from "./api.ts";
import { h, say } from "./dom.ts";
import { accountPage } from "./account.ts";
import { articlePage, articlesPage, closeStream } from "./articles.ts";
import { keysPage } from "./keys.ts";
import { membersPage } from "./members.ts";
import { manages, state, type SessionState } from "./session.ts";
import { forgotPasswordPage, setPasswordPage, signInPage, signUpPage } from "./sign-in.ts";
import { usagePage } from "./usage.ts";
import { destinationsPage, workflowsPage } from "./workflows.ts";
import { webhooksPage } from "./webhooks.ts";

const PAGES: { path: string; label: string; managers?: boolean; render: (rest: string) => Promise<void> }[] = [
  { path: "articles", label: "Articles", render: (rest) => (rest.startsWith("/") ? articlePage(rest.slice(1)) : articlesPage(new URLSearchParams(rest.replace(/^\?/, "")))) },
  { path: "workflows", label: "Workflows", render: workflowsPage },
  { path: "destinations", label: "Destinations", render: destinationsPage },
  { path: "webhooks", label: "Webhooks", render: webhooksPage },
  { path: "keys", label: "API keys", render: keysPage },
  { path: "usage", label: "Usage", render: usagePage },
  { path: "members", label: "Members", managers: true, render: membersPage },
  { path: "settings", label: "Settings", render: () => accountPage(loadSession) },
];

/** A one-time link's token, read from the address once and then removed from it (and from history). */
let linkToken: string | undefined;

function route(): string {
  const hash = location.hash.replace(/^#\/?/, "");
  const link = hash.match(/^set-password\/([A-Za-z0-9_-]+)$/);
  if (link) {
    linkToken = link[1];
    history.replaceState(null, "", `${location.pathname}#/set-password`);
    return "set-password";
  }
  return hash.match(/^[a-z-]*/)![0];
}

function renderHeader(): void {
  const nav = document.getElementById("nav")!;
  const account = document.getElementById("account")!;
  const session = state.session;
  nav.hidden = !session;
  nav.replaceChildren();
  account.replaceChildren();
  if (!session) return;
  const current = route();
  for (const page of PAGES) {
    if (page.managers && !manages()) continue;
    nav.appendChild(h("a", { href: `#/${page.path}`, "aria-current": current === page.path ? "page" : false }, page.label));
  }
  account.append(
    h("span", { class: "muted" }, session.current_account ? `${session.current_account.name} · ${session.user.email}` : session.user.email),
    h("button", {
      type: "button", class: "secondary",
      onclick: async () => {
        await api("POST", "/sign-out");
        state.session = null;
        setCsrfToken("");
        location.hash = "#/sign-in";
        await render();
      },
    }, "Sign out"),
  );
}

async function loadSession(): Promise<void> {
  const answer = await api<{ data: SessionState }>("GET", "/session");
  state.session = answer.status === 200 ? answer.body.data : null;
  setCsrfToken(state.session?.csrf_token ?? "");
  await render();
}

/**
 * Views render one after another, so the view last asked for is the one left showing: a slow
 * view asked for earlier never replaces it when its answers arrive late.
 */
let rendering: Promise<void> = Promise.resolve();
function render(): Promise<void> {
  rendering = rendering.then(renderNow, renderNow);
  return rendering;
}

async function renderNow(): Promise<void> {
  const path = route();
  renderHeader();
  if (path === "set-password" && linkToken) return setPasswordPage(linkToken, afterSignIn);
  if (!state.session && path === "forgot-password") return forgotPasswordPage();
  if (!state.session && path === "sign-up") return signUpPage();
  if (!state.session) return signInPage(afterSignIn);
  closeStream();
  const page = PAGES.find((p) => p.path === path) ?? PAGES[0]!;
  if (page.path !== path) return void (location.hash = `#/${page.path}`);
  await page.render(location.hash.replace(/^#\/?[a-z-]*/, ""));
}

async function afterSignIn(): Promise<void> {
  linkToken = undefined;
  say("Signed in.");
  history.replaceState(null, "", `${location.pathname}#/articles`);
  await loadSession();
}

window.addEventListener("hashchange", () => void render());
void loadSession();
