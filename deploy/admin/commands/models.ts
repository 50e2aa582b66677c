// Operator commands of the model catalog (generation-runner): list, add, update (prices, fallbacks
// and the provider rate limits the runner paces its calls by).
import {
  AddModelResponseSchema,
  ListModelsResponseSchema,
  UpdateModelResponseSchema,
} from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { UsageError, bool, required } from "../args.ts";
import type { AdminCommand } from "../command.ts";
import { asJson } from "../json-output.ts";

// A bare flag (`--batch`) parses as "true"; `--batch false` is accepted too.
const flag = (f: Record<string, string>, name: string) => bool(f, name) ?? false;

function price(f: Record<string, string>, name: string): string | undefined {
  const value = f[name];
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`--${name} must be a decimal USD amount per million tokens, got "${value}"`);
  return value;
}

const requiredPrice = (f: Record<string, string>, name: string) => price(f, name) ?? required(f, name);

// The provider rate limits a model may carry, with their bounds (the runner checks them too).
const LIMITS = { "requests-per-minute": 10_000_000, "tokens-per-minute": 10_000_000_000, "max-concurrent-calls": 100_000 } as const;
type LimitFlag = keyof typeof LIMITS;

/** A limit's flag: a whole number within its bounds, or (where `none` is allowed) "none" for removing it. */
function limit(f: Record<string, string>, name: LimitFlag, none: boolean): number | "none" | undefined {
  const value = f[name];
  if (value === undefined) return undefined;
  if (none && value === "none") return "none";
  const max = LIMITS[name];
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from 1 to ${max.toLocaleString("en-US")}${none ? ', or none to remove it' : ""}, got "${value}"`);
  }
  return Number(value);
}

const setLimit = (f: Record<string, string>, name: LimitFlag) => limit(f, name, false) as number | undefined;
const int64 = (n: number | undefined) => (n === undefined ? undefined : BigInt(n));

/** An update's limit: its value, or its clear_ flag for `none`. */
function limitChange(f: Record<string, string>, name: LimitFlag): { value?: number; clear: boolean } {
  const value = limit(f, name, true);
  return value === "none" ? { clear: true } : { value, clear: false };
}

const LIMIT_USAGE = "[--requests-per-minute N] [--tokens-per-minute N] [--max-concurrent-calls N]";

export const modelCommands: AdminCommand[] = [
  {
    name: "model list",
    usage: "",
    summary: "list the model catalog (prices in USD per million tokens; a rate limit is shown only when set)",
    run: async (_f, c) => asJson(ListModelsResponseSchema, await c.models.listModels({})).models,
  },
  {
    name: "model add",
    usage: `--id provider:model --input-price P --output-price P [--batch] [--inactive] [--fallback ID] ${LIMIT_USAGE}`,
    summary:
      "add a model (active unless --inactive); the provider must be configured on the runners. A rate limit left out is not configured: " +
      "the runner learns it from the provider's x-ratelimit headers",
    run: async (f, c) =>
      asJson(
        AddModelResponseSchema,
        await c.models.addModel({
          model: {
            id: required(f, "id"),
            active: !flag(f, "inactive"),
            supportsBatch: flag(f, "batch"),
            inputPricePerMillion: requiredPrice(f, "input-price"),
            outputPricePerMillion: requiredPrice(f, "output-price"),
            fallbackModel: f.fallback,
            requestsPerMinute: setLimit(f, "requests-per-minute"),
            tokensPerMinute: int64(setLimit(f, "tokens-per-minute")),
            maxConcurrentCalls: setLimit(f, "max-concurrent-calls"),
          },
        }),
      ).model,
  },
  {
    name: "model update",
    usage:
      '--id provider:model [--active true|false] [--batch true|false] [--input-price P] [--output-price P] [--fallback ID|""] ' +
      "[--requests-per-minute N|none] [--tokens-per-minute N|none] [--max-concurrent-calls N|none]",
    summary: "change a model's status, prices, fallback or rate limits (an empty --fallback removes the fallback; none removes a limit)",
    run: async (f, c) => {
      const rpm = limitChange(f, "requests-per-minute");
      const tpm = limitChange(f, "tokens-per-minute");
      const concurrent = limitChange(f, "max-concurrent-calls");
      return asJson(
        UpdateModelResponseSchema,
        await c.models.updateModel({
          id: required(f, "id"),
          active: bool(f, "active"),
          supportsBatch: bool(f, "batch"),
          inputPricePerMillion: price(f, "input-price"),
          outputPricePerMillion: price(f, "output-price"),
          fallbackModel: f.fallback === "true" ? undefined : f.fallback,
          requestsPerMinute: rpm.value,
          clearRequestsPerMinute: rpm.clear,
          tokensPerMinute: int64(tpm.value),
          clearTokensPerMinute: tpm.clear,
          maxConcurrentCalls: concurrent.value,
          clearMaxConcurrentCalls: concurrent.clear,
        }),
      ).model;
    },
  },
];
