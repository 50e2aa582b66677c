// Operator commands of the model catalog (generation-runner): list, add, update.
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

export const modelCommands: AdminCommand[] = [
  {
    name: "model list",
    usage: "",
    summary: "list the model catalog (prices in USD per million tokens)",
    run: async (_f, c) => asJson(ListModelsResponseSchema, await c.models.listModels({})).models,
  },
  {
    name: "model add",
    usage: "--id provider:model --input-price P --output-price P [--batch] [--inactive] [--fallback ID]",
    summary: "add a model (active unless --inactive); the provider must be configured on the runners",
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
          },
        }),
      ).model,
  },
  {
    name: "model update",
    usage: "--id provider:model [--active true|false] [--batch true|false] [--input-price P] [--output-price P] [--fallback ID|\"\"]",
    summary: "change a model's status, prices or fallback (an empty --fallback removes it)",
    run: async (f, c) =>
      asJson(
        UpdateModelResponseSchema,
        await c.models.updateModel({
          id: required(f, "id"),
          active: bool(f, "active"),
          supportsBatch: bool(f, "batch"),
          inputPricePerMillion: price(f, "input-price"),
          outputPricePerMillion: price(f, "output-price"),
          fallbackModel: f.fallback === "true" ? undefined : f.fallback,
        }),
      ).model,
  },
];
