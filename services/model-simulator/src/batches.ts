// OpenAI Batch API over the in-memory file store. A batch walks validating → in_progress →
// completed on timers, so callers exercise the same polling loop they use against the real API.

import type { ChatOutcome } from "./chat.ts";
import type { FileStore } from "./files.ts";
import { fingerprint } from "./prompt-seed.ts";

export type BatchStatus = "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" | "cancelling" | "cancelled";

export interface Batch {
  id: string;
  object: "batch";
  endpoint: string;
  model: string | null;
  errors: { object: "list"; data: { code: string; message: string; param: string | null; line: number | null }[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  };
  metadata: Record<string, string> | null;
}

interface BatchLine {
  custom_id: string;
  method: string;
  url: string;
  body: unknown;
}

export type RunChat = (body: unknown) => Promise<ChatOutcome>;

export const SUPPORTED_ENDPOINT = "/v1/chat/completions";
const now = () => Math.floor(Date.now() / 1000);

export class BatchError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export class BatchQueue {
  private readonly batches = new Map<string, Batch>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private sequence = 0;
  private stopped = false;

  constructor(
    private readonly files: FileStore,
    private readonly runChat: RunChat,
    private readonly delayMs: number,
  ) {}

  create(request: Record<string, unknown>): Batch {
    const inputFileId = request.input_file_id;
    if (typeof inputFileId !== "string") throw new BatchError(400, "Missing required parameter: 'input_file_id'.", "input_file_id");
    const input = this.files.content(inputFileId);
    if (input === undefined) throw new BatchError(404, `No such File object: ${inputFileId}`, "input_file_id");
    const endpoint = typeof request.endpoint === "string" ? request.endpoint : "";
    if (endpoint !== SUPPORTED_ENDPOINT) {
      throw new BatchError(400, `Invalid endpoint '${endpoint}'; the simulator supports '${SUPPORTED_ENDPOINT}'.`, "endpoint");
    }

    this.sequence++;
    const parsed = parseLines(input, endpoint);
    const firstModel = parsed.lines.map((l) => (l.body as { model?: unknown })?.model).find((m) => typeof m === "string");
    const batch: Batch = {
      id: `batch_sim${String(this.sequence).padStart(6, "0")}`,
      object: "batch",
      endpoint,
      model: (firstModel as string | undefined) ?? null,
      errors: null,
      input_file_id: inputFileId,
      completion_window: typeof request.completion_window === "string" ? request.completion_window : "24h",
      status: "validating",
      output_file_id: null,
      error_file_id: null,
      created_at: now(),
      in_progress_at: null,
      expires_at: now() + 24 * 3600,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: parsed.lines.length, completed: 0, failed: 0 },
      usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
      metadata: (request.metadata as Record<string, string> | undefined) ?? null,
    };
    this.batches.set(batch.id, batch);

    if (parsed.errors.length > 0 || parsed.lines.length === 0) {
      const errors = parsed.errors.length > 0 ? parsed.errors : [{ code: "empty_file", message: "The input file has no requests.", param: null, line: null }];
      this.later(Math.min(100, this.delayMs), () => {
        batch.status = "failed";
        batch.failed_at = now();
        batch.errors = { object: "list", data: errors };
      });
    } else {
      this.later(Math.floor(this.delayMs / 4), () => this.run(batch, parsed.lines));
    }
    return batch;
  }

  get(id: string): Batch | undefined {
    return this.batches.get(id);
  }

  list(): Batch[] {
    return [...this.batches.values()].reverse();
  }

  cancel(id: string): Batch {
    const batch = this.batches.get(id);
    if (!batch) throw new BatchError(404, `No such Batch object: ${id}`);
    if (batch.status !== "validating" && batch.status !== "in_progress") {
      throw new BatchError(409, `Cannot cancel a batch with status '${batch.status}'.`);
    }
    batch.status = "cancelling";
    batch.cancelling_at = now();
    this.later(50, () => {
      batch.status = "cancelled";
      batch.cancelled_at = now();
    });
    return batch;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private later(ms: number, action: () => void | Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      // A failure here must not end the simulator process (an unhandled rejection would).
      if (!this.stopped) Promise.resolve().then(action).catch((error) => console.error(`simulator batch task failed: ${(error as Error).message}`));
    }, ms);
    this.timers.add(timer);
  }

  private async run(batch: Batch, lines: BatchLine[]): Promise<void> {
    if (batch.status !== "validating") return;
    batch.status = "in_progress";
    batch.in_progress_at = now();
    const startedAt = Date.now();
    const outcomes = await Promise.all(lines.map((line) => this.runLine(batch, line)));
    if (this.stopped || batch.status !== "in_progress") return;

    // Finish no sooner than the configured delay so pollers see the intermediate states.
    const wait = Math.max(0, this.delayMs - Math.floor(this.delayMs / 4) - (Date.now() - startedAt));
    this.later(wait, () => {
      if (batch.status !== "in_progress") return;
      batch.status = "finalizing";
      batch.finalizing_at = now();
      const succeeded = outcomes.filter((o) => o.ok);
      const failed = outcomes.filter((o) => !o.ok);
      const jsonl = (items: typeof outcomes) => items.map((o) => JSON.stringify(o.line) + "\n").join("");
      batch.output_file_id = this.files.add(`${batch.id}_output.jsonl`, "batch_output", jsonl(succeeded)).id;
      if (failed.length > 0) batch.error_file_id = this.files.add(`${batch.id}_error.jsonl`, "batch_output", jsonl(failed)).id;
      batch.request_counts = { total: lines.length, completed: succeeded.length, failed: failed.length };
      for (const outcome of succeeded) {
        const usage = (outcome.line.response?.body as { usage?: { prompt_tokens: number; completion_tokens: number } }).usage;
        batch.usage.input_tokens += usage?.prompt_tokens ?? 0;
        batch.usage.output_tokens += usage?.completion_tokens ?? 0;
      }
      batch.usage.total_tokens = batch.usage.input_tokens + batch.usage.output_tokens;
      batch.status = "completed";
      batch.completed_at = now();
    });
  }

  private async runLine(batch: Batch, line: BatchLine): Promise<{ ok: boolean; line: OutputLine }> {
    const requestId = `req_sim${fingerprint(batch.id + line.custom_id)}`;
    const id = `batch_req_sim${fingerprint(batch.id + "/" + line.custom_id)}`;
    const outcome = await this.runChat(line.body);
    return {
      ok: outcome.status === 200,
      line: { id, custom_id: line.custom_id, response: { status_code: outcome.status, request_id: requestId, body: outcome.body }, error: null },
    };
  }
}

interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

function parseLines(input: string, endpoint: string): { lines: BatchLine[]; errors: NonNullable<Batch["errors"]>["data"] } {
  const lines: BatchLine[] = [];
  const errors: NonNullable<Batch["errors"]>["data"] = [];
  input.split("\n").forEach((text, index) => {
    if (text.trim() === "") return;
    const line = index + 1;
    let value: Partial<BatchLine>;
    try {
      value = JSON.parse(text);
    } catch {
      errors.push({ code: "invalid_json_line", message: "This line is not parseable as valid JSON.", param: null, line });
      return;
    }
    if (typeof value.custom_id !== "string") {
      errors.push({ code: "missing_required_parameter", message: "Missing required parameter: 'custom_id'.", param: "custom_id", line });
    } else if (value.method !== "POST") {
      errors.push({ code: "invalid_request", message: "The 'method' must be 'POST'.", param: "method", line });
    } else if (value.url !== endpoint) {
      errors.push({ code: "mismatched_endpoint", message: `The 'url' must match the batch endpoint '${endpoint}'.`, param: "url", line });
    } else {
      lines.push(value as BatchLine);
    }
  });
  return { lines, errors };
}
