// Reading GET /v1/articles/{id}/events as a client does: Server-Sent Events frames parsed into
// { id, event, data }, comments (the heartbeat) kept apart, until the server ends the stream; and
// an article whose run writes a few events a moment apart.
import { createArticle } from "../harness/articles.ts";
import type { ApiClient } from "../harness/http.ts";
import { articleBody, createWorkflow, marker } from "./generation-support.ts";

/** A three-step article (Outline, Draft, Edit) whose steps take a moment each; `extra` fields go with its creation. */
export async function steppedArticle(api: ApiClient, projectId: number, extra: Record<string, unknown> = {}): Promise<any> {
  const m = marker("events");
  const type = marker("evented");
  await createWorkflow(api, projectId, type, [
    { step_name: "Outline", user: `[[sim:sleep=400]][[sim:echo]]outline ${m}` },
    { step_name: "Draft", user: `[[sim:sleep=400]][[sim:echo]]draft ${m}` },
    { step_name: "Edit", user: `[[sim:sleep=400]][[sim:echo]]edit ${m}` },
  ]);
  return createArticle(api, articleBody(projectId, { article_type: type, ...extra }));
}
export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The JSON body of a refused request. */
  error?: any;
  events: SseEvent[];
  comments: string[];
  /** Resolves once the server ended the stream (or the deadline aborted it, which fails `ended`). */
  done: Promise<void>;
  ended: boolean;
  /** Resolves when an event passing `match` has arrived. */
  until(match: (e: SseEvent) => boolean): Promise<SseEvent>;
  close(): void;
}

export async function openEvents(baseUrl: string, token: string, id: string | number, opts: { lastEventId?: string; deadlineMs?: number } = {}): Promise<SseStream> {
  const abort = new AbortController();
  const deadline = setTimeout(() => abort.abort(), opts.deadlineMs ?? 60_000);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "text/event-stream" };
  if (opts.lastEventId) headers["last-event-id"] = opts.lastEventId;
  const res = await fetch(`${baseUrl}/v1/articles/${id}/events`, { headers, signal: abort.signal });
  const waiting: { match: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }[] = [];
  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    events: [],
    comments: [],
    ended: false,
    done: Promise.resolve(),
    until(match) {
      const seen = stream.events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ match, resolve }));
    },
    close: () => abort.abort(),
  };
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    clearTimeout(deadline);
    stream.error = await res.json().catch(() => undefined);
    stream.ended = true;
    return stream;
  }
  stream.done = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: Partial<SseEvent> = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) stream.comments.push(line.slice(1).trim());
            else if (line.startsWith("id: ")) event.id = line.slice(4);
            else if (line.startsWith("event: ")) event.event = line.slice(7);
            else if (line.startsWith("data: ")) event.data = JSON.parse(line.slice(6));
          }
          if (event.event) {
            const e = event as SseEvent;
            stream.events.push(e);
            for (const w of waiting.filter((w) => w.match(e))) {
              waiting.splice(waiting.indexOf(w), 1);
              w.resolve(e);
            }
          }
        }
      }
      stream.ended = !abort.signal.aborted;
    } catch {
      stream.ended = false;
    } finally {
      clearTimeout(deadline);
    }
  })();
  return stream;
}
