// Signing in, setting a password from a one-time link, asking for a new link by mail ("forgot
// password"), and signing up when the service offers it. The pages open without a session.
import { api, type Answer } from "./api.ts";
import { errorsOf, field, form, h, show } from "./dom.ts";

/** Signed in when the answer is 200; else the answer's error, for the form to show. */
async function signingIn(answer: Promise<Answer>, onSignedIn: () => void): Promise<string | void> {
  const { status, body } = await answer;
  if (status !== 200) return errorsOf(body);
  onSignedIn();
}

export function signInPage(onSignedIn: () => void): void {
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const signIn = form(
    () => signingIn(api("POST", "/sign-in", { email: email.value, password: password.value }), onSignedIn),
    field("Email", email),
    field("Password", password),
    h("button", { type: "submit" }, "Sign in"),
  );
  const signUp = h("p", { hidden: true }, h("a", { href: "#/sign-up" }, "New here? Sign up"));
  show(
    h("h1", {}, "Sign in"),
    signIn,
    h("p", { class: "muted" }, "No password yet? Use the one-time link you were given. ", h("a", { href: "#/forgot-password" }, "Forgot your password?")),
    signUp,
  );
  // The sign-up link shows only where the service offers sign-up.
  void api("GET", "/sign-up").then((answer) => (signUp.hidden = answer.status !== 200));
}

/** A request that ends in a mail: its answer's message shown in place of the form. */
async function mailing(answer: Promise<Answer>, accepted: number): Promise<string | void> {
  const { status, body } = await answer;
  if (status !== accepted) return status === 404 ? "This service does not send mail: ask an owner or admin of your account, or the operator, for a link." : errorsOf(body);
  show(h("h1", {}, "Check your mail"), h("p", { role: "status" }, body.message), h("p", {}, h("a", { href: "#/sign-in" }, "Back to sign-in")));
}

export function forgotPasswordPage(): void {
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true });
  const ask = form(() => mailing(api("POST", "/forgot-password", { email: email.value }), 202), field("Email", email), h("button", { type: "submit" }, "Mail me a link"));
  show(h("h1", {}, "Forgot your password?"), h("p", {}, "We mail a one-time link that sets a new password to the address, if it has a sign-in."), ask, h("p", {}, h("a", { href: "#/sign-in" }, "Back to sign-in")));
}

export async function signUpPage(): Promise<void> {
  if ((await api("GET", "/sign-up")).status !== 200) return show(h("h1", {}, "Not found"), h("p", {}, "This service does not offer sign-up."), h("p", {}, h("a", { href: "#/sign-in" }, "Sign in")));
  const name = h("input", { name: "name", autocomplete: "name", required: true });
  const email = h("input", { type: "email", name: "email", autocomplete: "email", required: true });
  const accountName = h("input", { name: "account_name", autocomplete: "organization" });
  const signUp = form(
    () => mailing(api("POST", "/sign-up", { name: name.value, email: email.value, account_name: accountName.value }), 202),
    field("Your name", name),
    field("Email", email),
    field("Account name (optional)", accountName),
    h("button", { type: "submit" }, "Sign up"),
  );
  show(h("h1", {}, "Sign up"), h("p", {}, "We mail a link to confirm the address; it sets your password."), signUp);
}

export function setPasswordPage(token: string, onSignedIn: () => void): void {
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", minlength: 10, required: true });
  const setPassword = form(
    () => signingIn(api("POST", "/set-password", { token, password: password.value }), onSignedIn),
    field("New password (at least 10 characters)", password),
    h("button", { type: "submit" }, "Set password and sign in"),
  );
  show(h("h1", {}, "Set your password"), setPassword);
}
