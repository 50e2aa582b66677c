// A real local webhook receiver whose answers each test scripts (the test stack allows private
// webhook URLs).
import { randomBytes } from "node:crypto";
import { eventually } from "./eventually.ts";

export interface ReceivedWebhook {
  at: number;
  method: string;
  headers: Record<string, string>;
  body: string;
  json: any;
}

/** Answers the n-th request (from 1) to a hook. */
export type HookScript = (n: number) => Response | Promise<Response>;

export interface Hook {
  url: string;
  requests: ReceivedWebhook[];
  /** Resolves once `count` requests arrived; fails after timeoutMs. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
}

export interface Receiver {
  origin: string;
  hook(script?: HookScript): Hook;
  /** Requests to paths no hook owns (e.g. a redirect target). */
  stray: ReceivedWebhook[];
  stop(): void;
}

export function startReceiver(): Receiver {
  const hooks = new Map<string, { script: HookScript; requests: ReceivedWebhook[] }>();
  const stray: ReceivedWebhook[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const text = await req.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const received = { at: Date.now(), method: req.method, headers: Object.fromEntries(req.headers), body: text, json };
      const hook = hooks.get(new URL(req.url).pathname);
      if (!hook) {
        stray.push(received);
        return new Response("no such hook", { status: 404 });
      }
      hook.requests.push(received);
      return hook.script(hook.requests.length);
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    origin,
    stray,
    hook(script = () => new Response("ok")) {
      const path = `/hooks/${randomBytes(6).toString("hex")}`;
      const entry = { script, requests: [] as ReceivedWebhook[] };
      hooks.set(path, entry);
      return {
        url: origin + path,
        requests: entry.requests,
        waitForRequests: async (count, timeoutMs = 30_000) => {
          await eventually(async () => entry.requests.length, (n) => n >= count, timeoutMs, `${count} webhook request(s) at ${path}`);
          return entry.requests;
        },
      };
    },
    stop: () => server.stop(true),
  };
}
