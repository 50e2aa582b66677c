// Signing in, and setting a password from a one-time link.
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
  show(h("h1", {}, "Sign in"), signIn, h("p", { class: "muted" }, "No password yet? Use the one-time link you were given."));
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
