// The run's webhook receiver: every completion webhook is checked against the project's signing
// secret and counted per article, so a lost or repeated delivery shows in the figures.
import { Webhook } from "standardwebhooks";

export interface WebhookInbox {
  url: string;
  /** Verified deliveries per article external_id. */
  deliveries: Map<string, number>;
  /** Requests whose signature did not verify (answered 401). */
  badSignatures: number;
  /** The secret the project signs with; set once it is known, before any article exists. */
  trust(secret: string): void;
  stop(): void;
}

export function openWebhookInbox(): WebhookInbox {
  let verifier: Webhook | undefined;
  const inbox: WebhookInbox = {
    url: "",
    deliveries: new Map(),
    badSignatures: 0,
    trust: (secret) => void (verifier = new Webhook(secret)),
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = await request.text();
      let payload: { data?: { external_id?: string } };
      try {
        payload = verifier!.verify(body, Object.fromEntries(request.headers)) as typeof payload;
      } catch {
        inbox.badSignatures++;
        return new Response("signature does not verify", { status: 401 });
      }
      const id = payload.data?.external_id ?? "(none)";
      inbox.deliveries.set(id, (inbox.deliveries.get(id) ?? 0) + 1);
      return new Response("ok");
    },
  });
  inbox.url = `http://127.0.0.1:${server.port}/webhooks/chaos`;
  return inbox;
}
