// The dashboard's API as a browser uses it, over real HTTP: a cookie jar holding the session
// cookie, and the CSRF token from /dashboard/api/session on every state change. One-time links
// are made through the operator's contract, as `npm run admin -- user link` makes them.
import { SessionService } from "../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { stackClient } from "./service-clients.ts";
import type { TestStack } from "./stack.ts";
import { passwordLinkAddress } from "../../services/kit/src/dashboard-links.ts";
import { answerOf, type ApiResponse } from "./http.ts";

export const sessionOperator = (stack: TestStack) => stackClient(stack, SessionService, stack.env.ACCOUNTS_BILLING_URL!, "operator");

/** A one-time link's token for the user. */
export async function linkTokenFor(stack: TestStack, userId: number): Promise<string> {
  return (await sessionOperator(stack).createPasswordLink({ userId: BigInt(userId) })).linkToken;
}

export const linkAddress = (stack: TestStack, token: string) => passwordLinkAddress(stack.baseUrl, token);

export type DashboardAnswer<T = any> = ApiResponse<T>;

/** A browser-like client of /dashboard/api: keeps the session cookie, sends the CSRF token. */
export class DashboardClient {
  cookie: string | undefined;
  csrf = "";

  constructor(readonly baseUrl: string) {}

  async send<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<DashboardAnswer<T>> {
    const origin = new URL(this.baseUrl).origin;
    const all: Record<string, string> = { accept: "application/json", origin, ...headers };
    if (this.cookie) all.cookie = this.cookie;
    if (method !== "GET" && this.csrf && !("x-csrf-token" in headers)) all["x-csrf-token"] = this.csrf;
    if (body !== undefined) all["content-type"] = "application/json";
    const res = await fetch(`${this.baseUrl}/dashboard/api${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body), redirect: "manual" });
    const set = res.headers.get("set-cookie");
    if (set) {
      const [pair] = set.split(";");
      this.cookie = pair!.endsWith("=") ? undefined : pair;
    }
    return answerOf<T>(res);
  }

  get = <T = any>(path: string) => this.send<T>("GET", path);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.send<T>("POST", path, body ?? {}, headers);

  /** Reads the session (and its CSRF token); the answer's status. */
  async refresh(): Promise<number> {
    const answer = await this.get("/session");
    if (answer.status === 200) this.csrf = answer.body.data.csrf_token;
    return answer.status;
  }

  async signIn(email: string, password: string): Promise<DashboardAnswer> {
    const answer = await this.post("/sign-in", { email, password });
    if (answer.status === 200) await this.refresh();
    return answer;
  }

  async setPassword(token: string, password: string): Promise<DashboardAnswer> {
    const answer = await this.post("/set-password", { token, password });
    if (answer.status === 200) await this.refresh();
    return answer;
  }
}
