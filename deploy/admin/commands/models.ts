// Operator commands of the model catalog (generation-runner): list, add, update (prices, fallbacks
// and the provider rate limits the runner paces its calls by).
import {
  AddModelResponseSchema,
  ListModelsResponseSchema,
  UpdateModelResponseSchema,
} from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { UsageError, bool, flag, optionalFlag, required, switchFlag, type Flags } from "../args.ts";
import { command, type AdminCommand } from "../command.ts";
import { asJson } from "../json-output.ts";

// A switch given on its own (`--batch`) parses as "true"; `--batch false` is accepted too.
const switchOn = <N extends string>(f: Flags<N>, name: NoInfer<N>) => bool(f, name) ?? false;

type PriceFlag = "input-price" | "output-price";

function price(f: Flags<PriceFlag>, name: PriceFlag): string | undefined {
  const value = f[name];
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`--${name} must be a decimal USD amount per million tokens, got "${value}"`);
  return value;
}

const requiredPrice = (f: Flags<PriceFlag>, name: PriceFlag) => price(f, name) ?? required(f, name);

// The provider rate limits a model may carry, with their bounds (the runner checks them too).
const LIMITS = { "requests-per-minute": 10_000_000, "tokens-per-minute": 10_000_000_000, "max-concurrent-calls": 100_000 } as const;
type LimitFlag = keyof typeof LIMITS;

/** A limit's flag: a whole number within its bounds, or (where `none` is allowed) "none" for removing it. */
function limit(f: Flags<LimitFlag>, name: LimitFlag, none: boolean): number | "none" | undefined {
  const value = f[name];
  if (value === undefined) return undefined;
  if (none && value === "none") return "none";
  const max = LIMITS[name];
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from 1 to ${max.toLocaleString("en-US")}${none ? ', or none to remove it' : ""}, got "${value}"`);
  }
  return Number(value);
}

const setLimit = (f: Flags<LimitFlag>, name: LimitFlag) => limit(f, name, false) as number | undefined;
const int64 = (n: number | undefined) => (n === undefined ? undefined : BigInt(n));

/** An update's limit: its value, or its clear_ flag for `none`. */
function limitChange(f: Flags<LimitFlag>, name: LimitFlag): { value?: number; clear: boolean } {
  const value = limit(f, name, true);
  return value === "none" ? { clear: true } : { value, clear: false };
}

/** The limit flags of model add (N) and model update (N|none). */
const limitFlags = (value: string) => (Object.keys(LIMITS) as LimitFlag[]).map((name) => optionalFlag(name, value));

export const modelCommands: AdminCommand[] = [
  command({
    name: "model list",
    flags: [],
    summary: "list the model catalog (prices in USD per million tokens; a rate limit is shown only when set)",
    run: async (_f, c) => asJson(ListModelsResponseSchema, await c.models.listModels({})).models,
  }),
  command({
    name: "model add",
    flags: [
      flag("id", "provider:model"),
      flag("input-price", "P"),
      flag("output-price", "P"),
      switchFlag("batch"),
      switchFlag("inactive"),
      optionalFlag("fallback", "ID"),
      ...limitFlags("N"),
    ],
    summary:
      "add a model (active unless --inactive); the provider must be configured on the runners. A rate limit left out is not configured: " +
      "the runner learns it from the provider's x-ratelimit headers",
    run: async (f, c) =>
      asJson(
        AddModelResponseSchema,
        await c.models.addModel({
          model: {
            id: required(f, "id"),
            active: !switchOn(f, "inactive"),
            supportsBatch: switchOn(f, "batch"),
            inputPricePerMillion: requiredPrice(f, "input-price"),
            outputPricePerMillion: requiredPrice(f, "output-price"),
            fallbackModel: f.fallback,
            requestsPerMinute: setLimit(f, "requests-per-minute"),
            tokensPerMinute: int64(setLimit(f, "tokens-per-minute")),
            maxConcurrentCalls: setLimit(f, "max-concurrent-calls"),
          },
        }),
      ).model,
  }),
  command({
    name: "model update",
    flags: [
      flag("id", "provider:model"),
      optionalFlag("active", "true|false"),
      optionalFlag("batch", "true|false"),
      optionalFlag("input-price", "P"),
      optionalFlag("output-price", "P"),
      optionalFlag("fallback", 'ID|""'),
      ...limitFlags("N|none"),
    ],
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
          fallbackModel: f.fallback,
          requestsPerMinute: rpm.value,
          clearRequestsPerMinute: rpm.clear,
          tokensPerMinute: int64(tpm.value),
          clearTokensPerMinute: tpm.clear,
          maxConcurrentCalls: concurrent.value,
          clearMaxConcurrentCalls: concurrent.clear,
        }),
      ).model;
    },
  }),
];
