// The simulator's HTTP surface: an OpenAI-compatible API under /v1, a SearXNG-style /search with
// the pages it links to, and /_sim endpoints tests use to inspect what the model was asked and to
// make the provider rate-limited, down or slow (provider-limits.ts).

import type { Server } from "bun";
import { BatchError, BatchQueue } from "./batches.ts";
import { CallCounter } from "./call-counter.ts";
import { completeChat, tokensIn, tokensRequested, type ChatState } from "./chat.ts";
import { readDirectives } from "./directives.ts";
import { FileStore } from "./files.ts";
import { generateImages, imageSizeOf, MAX_SIDE, MIN_SIDE } from "./images.ts";
import { badRequest, jsonResponse, notFound, openAIError } from "./openai-errors.ts";
import { readPageSlug, renderPage } from "./pages.ts";
import { ProviderLimits, ProviderSettingsError, settingsFromJson, type ProviderSettings } from "./provider-limits.ts";
import { search } from "./search.ts";
import { REAL_MODEL } from "./real-model-writing.ts";

export interface SimulatorOptions {
  port?: number;
  hostname?: string;
  /** How long a batch takes to complete; 2000 unless given (main.ts reads SIMULATOR_BATCH_DELAY_MS). */
  batchDelayMs?: number;
  /** Rate limits, outage and slow period to start with; none unless given (main.ts reads SIMULATOR_*_PER_MINUTE). */
  provider?: ProviderSettings;
}

export interface RunningSimulator {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export const SIMULATED_MODELS = ["sim-fast", "sim-pro", "sim-batch", "sim-image", REAL_MODEL, "unavailable-model"];
const DEFAULT_BATCH_DELAY_MS = 2000;

interface Simulation {
  chat: ChatState;
  /** Image prompts received, so tests can check what reached the image model. */
  imagePrompts: CallCounter;
  files: FileStore;
  batches: BatchQueue;
  provider: ProviderLimits;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const chat: ChatState = { calls: new CallCounter(), failedOnce: new Set() };
  const files = new FileStore();
  const batches = new BatchQueue(files, (body) => completeChat(body, chat), opts.batchDelayMs ?? DEFAULT_BATCH_DELAY_MS);
  const provider = new ProviderLimits();
  provider.configure(opts.provider ?? {});
  const simulation: Simulation = { chat, imagePrompts: new CallCounter(), files, batches, provider };

  const server: Server<undefined> = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    // `[[sim:sleep=MS]]` holds a request open; Bun's default 10 s idle timeout would cut it.
    idleTimeout: 255,
    fetch: (request) => route(request, simulation),
    error: (error) => openAIError(500, `Simulator error: ${error.message}`, "server_error", null),
  });
  const port = server.port ?? 0;
  return {
    url: `http://${server.hostname}:${port}`,
    port,
    stop: async () => {
      batches.stop();
      await server.stop(true);
    },
  };
}

const hasBearer = (request: Request): boolean => /^Bearer\s+\S+/i.test(request.headers.get("authorization") ?? "");

async function readJson(request: Request): Promise<Record<string, unknown> | null> {
  try {
    const body = await request.json();
    return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

async function route(request: Request, sim: Simulation): Promise<Response> {
  const url = new URL(request.url);
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const method = request.method;
  const parts = path.split("/").filter(Boolean);

  if (parts[0] === "v1") {
    if (!hasBearer(request)) {
      return openAIError(401, "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY'.", "invalid_request_error", "invalid_api_key");
    }
    return routeOpenAI(request, method, parts.slice(1), sim);
  }
  if (path === "/search" && (method === "GET" || method === "POST")) return searchRoute(request, url);
  if (parts[0] === "pages" && parts.length === 2 && method === "GET") {
    const address = readPageSlug(parts[1]);
    if (!address) return jsonResponse({ error: "page not found" }, 404);
    return new Response(renderPage(address, url.origin), { headers: { "content-type": "text/html; charset=utf-8" } });
  }
  if (path === "/_sim/calls" && method === "GET") {
    const contains = url.searchParams.get("contains");
    return jsonResponse(sim.chat.calls.report(contains ?? undefined));
  }
  if (path === "/_sim/calls" && method === "DELETE") {
    sim.chat.calls.reset();
    return jsonResponse({ calls: [], total: 0 });
  }
  if (path === "/_sim/image-prompts" && method === "GET") {
    const contains = url.searchParams.get("contains");
    return jsonResponse(sim.imagePrompts.report(contains ?? undefined));
  }
  if (path === "/_sim/image-prompts" && method === "DELETE") {
    sim.imagePrompts.reset();
    return jsonResponse({ calls: [], total: 0 });
  }
  if (path === "/_sim/provider" && method === "GET") return jsonResponse(sim.provider.state());
  if (path === "/_sim/provider" && method === "PUT") return configureProvider(request, sim.provider);
  if (path === "/_sim/provider/counts" && method === "DELETE") {
    sim.provider.resetCounts();
    return jsonResponse(sim.provider.state());
  }
  if (path === "/_sim/health" && method === "GET") return jsonResponse({ status: "ok", simulated: true });
  return notFound(`Unknown route: ${method} ${path}`);
}

async function routeOpenAI(request: Request, method: string, parts: string[], sim: Simulation): Promise<Response> {
  const [resource, id, action] = parts;
  const key = `${method} ${resource ?? ""}${id ? "/:id" : ""}${action ? "/" + action : ""}`;

  switch (key) {
    case "POST chat/:id":
      if (id !== "completions" || action) break;
      {
        const body = await readJson(request);
        return sim.provider.serve({ model: modelNamed(body, "unknown-model"), tokens: tokensRequested(body) }, async () => {
          if (!body) return badRequest("The request body must be a JSON object.");
          const outcome = await completeChat(body, sim.chat);
          return jsonResponse(outcome.body, outcome.status);
        });
      }
    case "GET models":
      return jsonResponse({ object: "list", data: SIMULATED_MODELS.map(modelObject) });
    case "GET models/:id":
      return SIMULATED_MODELS.includes(id) ? jsonResponse(modelObject(id)) : notFound(`The model '${id}' does not exist.`);
    case "POST files":
      return uploadFile(request, sim.files);
    case "GET files":
      return jsonResponse({ object: "list", data: sim.files.list(), has_more: false });
    case "GET files/:id": {
      const meta = sim.files.meta(id);
      return meta ? jsonResponse(meta) : notFound(`No such File object: ${id}`);
    }
    case "GET files/:id/content": {
      const content = sim.files.content(id);
      return content === undefined ? notFound(`No such File object: ${id}`) : new Response(content, { headers: { "content-type": "application/octet-stream" } });
    }
    case "DELETE files/:id":
      return sim.files.remove(id) ? jsonResponse({ id, object: "file", deleted: true }) : notFound(`No such File object: ${id}`);
    case "POST batches": {
      const body = await readJson(request);
      // Creating a batch is one request; its lines run later, outside the per-minute limits.
      return sim.provider.serve({ model: "batches", tokens: 0 }, async () => {
        if (!body) return badRequest("The request body must be a JSON object.");
        return batchAction(() => sim.batches.create(body));
      });
    }
    case "GET batches":
      return jsonResponse({ object: "list", data: sim.batches.list(), has_more: false });
    case "GET batches/:id": {
      const batch = sim.batches.get(id);
      return batch ? jsonResponse(batch) : notFound(`No such Batch object: ${id}`);
    }
    case "POST batches/:id/cancel":
      return batchAction(() => sim.batches.cancel(id));
    case "POST images/:id":
      if (id !== "generations" || action) break;
      {
        const body = await readJson(request);
        const prompt = typeof body?.prompt === "string" ? body.prompt : "";
        return sim.provider.serve({ model: modelNamed(body, "sim-image"), tokens: tokensIn(prompt) }, () => generateImagesRoute(body, sim));
      }
  }
  return notFound(`Unknown route: ${method} /v1/${parts.join("/")}`);
}

const modelNamed = (body: Record<string, unknown> | null, fallback: string): string =>
  typeof body?.model === "string" && body.model !== "" ? body.model : fallback;

async function configureProvider(request: Request, provider: ProviderLimits): Promise<Response> {
  try {
    provider.configure(settingsFromJson(await readJson(request)));
  } catch (error) {
    if (error instanceof ProviderSettingsError) return jsonResponse({ error: error.message }, 400);
    throw error;
  }
  return jsonResponse(provider.state());
}

function modelObject(id: string) {
  return { id, object: "model", created: 1_700_000_000, owned_by: "simulator" };
}

function batchAction(action: () => unknown): Response {
  try {
    return jsonResponse(action());
  } catch (error) {
    if (error instanceof BatchError) return openAIError(error.status, error.message, "invalid_request_error", null, error.param);
    throw error;
  }
}

async function uploadFile(request: Request, files: FileStore): Promise<Response> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return badRequest("Expected a multipart/form-data body with 'file' and 'purpose'.");
  }
  const file = form.get("file");
  const purpose = form.get("purpose");
  if (!(file instanceof Blob)) return badRequest("Missing required parameter: 'file'.", null, "file");
  if (typeof purpose !== "string" || purpose === "") return badRequest("Missing required parameter: 'purpose'.", null, "purpose");
  const filename = file instanceof File && file.name ? file.name : "upload.jsonl";
  return jsonResponse(files.add(filename, purpose, await file.text()));
}

async function generateImagesRoute(body: Record<string, unknown> | null, sim: Simulation): Promise<Response> {
  const { chat } = sim;
  if (!body || typeof body.prompt !== "string" || body.prompt === "") return badRequest("Missing required parameter: 'prompt'.", null, "prompt");
  sim.imagePrompts.record(body.prompt);
  const n = body.n === undefined || body.n === null ? 1 : Number(body.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return badRequest("'n' must be an integer from 1 to 10.", null, "n");
  const model = modelNamed(body, "sim-image");
  // Images obey the same failure and delay directives as chat so image steps can be tested too.
  const directives = readDirectives(body.prompt);
  if (directives.sleepMs > 0) await Bun.sleep(directives.sleepMs);
  if (model.startsWith("unavailable")) return openAIError(503, `The model '${model}' is currently unavailable.`, "server_error", "model_unavailable");
  if (directives.fail) return openAIError(500, "The server had an error while generating the image (simulated failure).", "server_error", "simulated_failure");
  const onceKey = `image:${model}:${body.prompt}`;
  if (directives.failOnce && !chat.failedOnce.has(onceKey)) {
    chat.failedOnce.add(onceKey);
    return openAIError(500, "The server had an error while generating the image (simulated one-time failure).", "server_error", "simulated_failure");
  }
  const size = body.size === undefined || body.size === null ? "1024x1024" : body.size;
  const pixels = imageSizeOf(size);
  if (!pixels) return badRequest(`'size' must be WIDTHxHEIGHT, each from ${MIN_SIDE} to ${MAX_SIDE} pixels (e.g. '1536x1024').`, null, "size");
  return jsonResponse({ created: Math.floor(Date.now() / 1000), data: generateImages(body.prompt, n, pixels), output_format: "png", size });
}

async function searchRoute(request: Request, url: URL): Promise<Response> {
  let params = url.searchParams;
  if (request.method === "POST") {
    const form = await request.formData().catch(() => null);
    params = new URLSearchParams();
    form?.forEach((value, name) => typeof value === "string" && params.set(name, value));
  }
  const query = params.get("q")?.trim() ?? "";
  if (query === "") return jsonResponse({ error: "missing query: pass q" }, 400);
  // A SearXNG instance without the json format enabled answers 403; this one only speaks json.
  if (params.get("format") !== "json") return jsonResponse({ error: "only format=json is supported" }, 403);
  const pageNumber = Number(params.get("pageno") ?? "1") || 1;
  return jsonResponse(search(query, url.origin, pageNumber));
}
