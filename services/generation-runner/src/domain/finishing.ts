// Finishing touches after the steps (the polishing state): article images and the humanization
// pass. Each result is checkpointed like a step, so it is generated and billed once.
import type { Db } from "../db/client.ts";
import { finishingCheckpointOf, imagesOf, saveFinishingCheckpoint, saveImage, type FinishingCheckpoint, type StoredImage } from "./checkpoints.ts";
import { callModel, StepFailure } from "./model-call.ts";
import type { CatalogModel } from "./model-catalog.ts";
import type { ModelClients } from "./providers.ts";
import { wordCountOf } from "./step-values.ts";
import { bodyOf, envelopeOf } from "../../../kit/src/article-envelope.ts";

// The nearest sizes image models accept (gpt-image-1: square, 3:2 landscape, 2:3 portrait).
const IMAGE_SIZE: Record<string, string> = {
  "1:1": "1024x1024",
  "16:9": "1536x1024",
  "4:3": "1536x1024",
  "9:16": "1024x1536",
  "3:4": "1024x1536",
};

const IMAGE_TIMEOUT_MS = 180_000;

export interface ImageRequest {
  count: number;
  aspectRatio?: string;
  title: string;
  keyword?: string;
  /** The image preset's style guidance, when the article uses one. */
  style?: string;
}

export function imagePrompt(req: ImageRequest, position: number): string {
  const about = req.keyword ? ` about ${req.keyword}` : "";
  const style = req.style?.trim() || "Clean, realistic editorial photography with natural light.";
  return `Editorial image ${position} of ${req.count} for the article "${req.title}"${about}; each image shows a different scene. Style: ${style} No text, lettering or logos in the image.`;
}

/** Generates the missing images (1..count) through the SDK's images API and stores each as it arrives. */
export async function generateImages(db: Db, clients: ModelClients, externalId: string, imageModel: string, req: ImageRequest): Promise<StoredImage[]> {
  const have = new Set((await imagesOf(db, externalId)).map((i) => i.position));
  const size = IMAGE_SIZE[req.aspectRatio ?? "1:1"] ?? IMAGE_SIZE["1:1"]!;
  for (let position = 1; position <= req.count; position++) {
    if (have.has(position)) continue;
    const prompt = imagePrompt(req, position);
    const { client, model } = clients.forModel(imageModel);
    let b64: string | undefined;
    try {
      const result = await client.images.generate(
        // dall-e models send URLs unless asked for base64; gpt-image models always send base64.
        { model, prompt, n: 1, size: size as "1024x1024", ...(model.startsWith("dall-e") ? { response_format: "b64_json" as const } : {}) },
        { signal: AbortSignal.timeout(IMAGE_TIMEOUT_MS), maxRetries: 0 },
      );
      b64 = result.data?.[0]?.b64_json;
    } catch (error) {
      throw new StepFailure(`image ${position} of ${req.count} failed on ${imageModel}: ${(error as Error).message}`);
    }
    if (!b64) throw new StepFailure(`image ${position} of ${req.count}: ${imageModel} returned no image data`);
    await saveImage(db, externalId, { position, model: imageModel, size, prompt, mediaType: "image/png", data: Buffer.from(b64, "base64") });
  }
  return imagesOf(db, externalId);
}

const HUMANIZE_SYSTEM =
  "You are a seasoned human editor. You rewrite machine-sounding articles so they read as if a thoughtful person wrote them, without changing what they say. You return only the rewritten article.";

function humanizePrompt(body: string, words: number, a: { title: string; keyword?: string; language: string }): string {
  return `Title: ${a.title}
Primary keyword (may be blank): ${a.keyword ?? ""}

Rewrite the article below so it reads naturally, as a skilled human writer would have written it.

- Keep every fact, figure, name, quotation, heading and the markdown structure; add nothing new and drop nothing of substance.
- Keep the language (${a.language}) and about the same length (about ${words} words).
- Vary sentence length and rhythm: mix short, punchy sentences with longer ones.
- Replace stock phrases and filler ("in today's fast-paced world", "it's important to note", "delve into", "in conclusion") with plain, specific wording.
- Prefer concrete verbs and everyday words; keep the tone and point of view of the original.
- Return the article only: no preface, no notes, no code fence.

Article:
${body}`;
}

/**
 * The humanization pass over the generated content. A JSON envelope keeps its shape: only the
 * body at article.content is rewritten.
 */
export async function humanize(
  db: Db,
  clients: ModelClients,
  externalId: string,
  content: string,
  opts: { primary: CatalogModel; fallback?: CatalogModel; temperature: number; title: string; keyword?: string; language: string; timeoutMs: number },
): Promise<FinishingCheckpoint> {
  const done = await finishingCheckpointOf(db, externalId, "humanize");
  if (done) return done;
  const body = bodyOf(content);
  const reply = await callModel(clients, opts.primary, opts.fallback, {
    system: HUMANIZE_SYSTEM,
    user: humanizePrompt(body, wordCountOf(body), opts),
    temperature: opts.temperature,
    outputFormat: "markdown",
    schemaName: "humanized",
    timeoutMs: opts.timeoutMs,
  });
  const envelope = envelopeOf(content);
  const output = envelope ? JSON.stringify({ ...envelope.document, article: { ...envelope.article, content: reply.output } }) : reply.output;
  return saveFinishingCheckpoint(db, externalId, { task: "humanize", model: reply.model, promptTokens: reply.promptTokens, completionTokens: reply.completionTokens, cost: reply.cost, output });
}
