// Model providers: OpenAI-compatible endpoints named by the first part of a model id
// ("openai:gpt-4o-mini" runs on provider "openai"). Configured only by environment:
//   openai      OPENAI_API_KEY (+ optional OPENAI_BASE_URL)
//   simulator   SIMULATOR_URL (the bundled simulator; `npm start` sets it when OPENAI_API_KEY is unset)
//   <name>      PROVIDER_<NAME>_BASE_URL (+ optional PROVIDER_<NAME>_API_KEY), e.g. a local server
// Every call goes through the official `openai` SDK pointed at the provider's base URL.
import OpenAI from "openai";
import { ConfigError, envUrl } from "../../../kit/src/config.ts";
import { providerFetch } from "./provider-connections.ts";

export interface ProviderEndpoint {
  name: string;
  /** Undefined means the SDK's default (api.openai.com). */
  baseUrl?: string;
  apiKey: string;
}

type Env = Record<string, string | undefined>;

const PROVIDER_VARIABLE = /^PROVIDER_([A-Z0-9_]+)_BASE_URL$/;
// Local OpenAI-compatible servers usually ignore the key, but the SDK insists on one.
const KEYLESS = "not-needed";

const set = (env: Env, name: string) => (env[name]?.trim() ? env[name]!.trim() : undefined);

export function providersFromEnv(env: Env): Map<string, ProviderEndpoint> {
  const providers = new Map<string, ProviderEndpoint>();
  const openaiKey = set(env, "OPENAI_API_KEY");
  if (openaiKey) {
    const baseUrl = set(env, "OPENAI_BASE_URL") ? envUrl(env, "OPENAI_BASE_URL", "", ["http:", "https:"]) : undefined;
    providers.set("openai", { name: "openai", baseUrl, apiKey: openaiKey });
  }
  if (set(env, "SIMULATOR_URL")) {
    const url = envUrl(env, "SIMULATOR_URL", "", ["http:", "https:"]).replace(/\/+$/, "");
    providers.set("simulator", { name: "simulator", baseUrl: `${url}/v1`, apiKey: "simulator" });
  }
  for (const variable of Object.keys(env).sort()) {
    const match = PROVIDER_VARIABLE.exec(variable);
    if (!match || !set(env, variable)) continue;
    const name = match[1].toLowerCase();
    if (name === "openai" || name === "simulator") throw new ConfigError(variable, `provider "${name}" is configured by its own variables`);
    providers.set(name, { name, baseUrl: envUrl(env, variable, "", ["http:", "https:"]), apiKey: set(env, `PROVIDER_${match[1]}_API_KEY`) ?? KEYLESS });
  }
  return providers;
}

export class ProviderNotConfigured extends Error {
  constructor(readonly provider: string) {
    super(`provider "${provider}" is not configured on this runner`);
  }
}

/** Splits "provider:model" at the first colon (model names may contain more, e.g. "llama3:8b"). */
export function splitModelId(id: string): { provider: string; model: string } {
  const at = id.indexOf(":");
  if (at <= 0 || at === id.length - 1) throw new Error(`model id must look like provider:model, got "${id}"`);
  return { provider: id.slice(0, at), model: id.slice(at + 1) };
}

/** One SDK client per provider, reused by every call. */
export class ModelClients {
  private readonly clients = new Map<string, OpenAI>();

  constructor(readonly providers: Map<string, ProviderEndpoint>) {}

  isConfigured(modelId: string): boolean {
    try {
      return this.providers.has(splitModelId(modelId).provider);
    } catch {
      return false;
    }
  }

  forModel(modelId: string): { client: OpenAI; model: string } {
    const { provider, model } = splitModelId(modelId);
    const endpoint = this.providers.get(provider);
    if (!endpoint) throw new ProviderNotConfigured(provider);
    let client = this.clients.get(provider);
    if (!client) {
      // Retries belong to the job (checkpointed, backed off, with the fallback model), not to the SDK.
      client = new OpenAI({ apiKey: endpoint.apiKey, baseURL: endpoint.baseUrl, maxRetries: 0, fetch: providerFetch });
      this.clients.set(provider, client);
    }
    return { client, model };
  }
}
