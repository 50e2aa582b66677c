// The article's images, generated while polishing: one per requested position, each illustrating
// its slot in the content (the featured image the whole article, the others their section), all
// in the project's image preset style, at the size the model accepts nearest to the requested
// aspect ratio. Each image is stored (bytes in the image store, then its checkpoint row) as it
// arrives, so a resumed run never generates or pays for it again. A failed image is tried again;
// on the job's last attempt the article completes without it and the run records why.
import { randomBytes } from "node:crypto";
import type { Logger } from "../../../kit/src/logger.ts";
import type { Db } from "../db/client.ts";
import { imagesOf, saveImage, updateRun, type OmittedImage, type StoredImage } from "./checkpoints.ts";
import { readImageFile } from "./image-files.ts";
import { altTextOf, imageSlots, type ImageSlot, type PlacedImage } from "./image-placement.ts";
import { DEFAULT_ASPECT_RATIO, imageSizeFor } from "./image-sizes.ts";
import type { ImageStores } from "./image-store.ts";
import { StepFailure, type CallTurn } from "./model-call.ts";
import { CallFailed, type Pacer } from "./paced-call.ts";
import { NO_LIMITS } from "../scheduler/index.ts";
import type { ModelClients } from "./providers.ts";

const IMAGE_TIMEOUT_MS = 180_000;
/** Tries of one image within a job attempt; the job's own retries come on top. */
const IMAGE_TRIES = 2;
/** Images generated at once for one article. */
const IMAGE_CONCURRENCY = 3;
const DEFAULT_STYLE = "Clean, realistic editorial photography with natural light.";

export interface ImageRequest {
  count: number;
  aspectRatio?: string;
  title: string;
  keyword?: string;
  /** The image preset's style guidance, when the article uses one. */
  style?: string;
}

export interface ArticleImageDeps {
  db: Db;
  clients: ModelClients;
  /** Image calls are paced to the image model's budget like model calls (paced-call.ts). */
  pacer: Pacer;
  /** Whose turn the article's image calls take. */
  turn: CallTurn;
  stores: ImageStores;
  logger: Logger;
  /** provider:model of article images. */
  imageModel: string;
  /** Where clients reach the gateway: image URLs are {publicBaseUrl}/images/{id}.{ext}. */
  publicBaseUrl: string;
}

export function imagePrompt(req: ImageRequest, slot: ImageSlot, position: number): string {
  const about = req.keyword ? ` (topic: ${req.keyword})` : "";
  const scene =
    position === 1
      ? `The featured image of the article "${req.title}"${about}: one scene that captures the article as a whole.`
      : `An image for the section "${altTextOf(slot.subject)}" of the article "${req.title}"${about}.`;
  const context = slot.context ? ` The passage it accompanies begins: "${slot.context}"` : "";
  // Two images can illustrate the same section: the position keeps their scenes apart.
  const set = req.count > 1 ? ` Image ${position} of ${req.count}: a scene none of the others shows.` : "";
  const style = req.style?.trim() || DEFAULT_STYLE;
  return `${scene}${context}${set} Style: ${style} No text, lettering or logos in the image.`;
}

export const imageUrl = (publicBaseUrl: string, image: Pick<StoredImage, "imageId" | "mediaType">) =>
  `${publicBaseUrl}/images/${image.imageId}.${extensionOf(image.mediaType)}`;

export const extensionOf = (mediaType: string) => (mediaType === "image/jpeg" ? "jpg" : mediaType.replace(/^image\//, ""));

/** An image as article-store keeps it with the article (proto ArticleImage). */
export const articleImageOf = (publicBaseUrl: string, i: StoredImage) => ({
  position: i.position,
  imageId: i.imageId,
  url: imageUrl(publicBaseUrl, i),
  alt: i.alt,
  width: i.width,
  height: i.height,
  aspectRatio: i.aspectRatio,
  mediaType: i.mediaType,
});

/** The stored images as the content shows them. */
export const placedImages = (publicBaseUrl: string, images: StoredImage[]): PlacedImage[] =>
  images.map((i) => ({ position: i.position, url: imageUrl(publicBaseUrl, i), alt: i.alt }));

/**
 * Generates the images not stored yet (positions 1..count) for `body`, the article's markdown.
 * Returns every stored image in position order. Images still failing throw a StepFailure (the
 * job is retried), except on the final attempt, where they are left out and recorded on the run.
 */
export async function generateImages(deps: ArticleImageDeps, externalId: string, body: string, req: ImageRequest, finalAttempt: boolean): Promise<StoredImage[]> {
  const slots = imageSlots(body, req.count, req.title);
  const stored = new Map((await imagesOf(deps.db, externalId)).map((i) => [i.position, i]));
  const missing = slots.map((_, i) => i + 1).filter((position) => !stored.has(position));
  const failures: OmittedImage[] = [];
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const position = missing[next++]!;
      try {
        stored.set(position, await generateImage(deps, externalId, req, slots[position - 1]!, position));
      } catch (error) {
        failures.push({ position, reason: (error as Error).message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMAGE_CONCURRENCY, missing.length) }, worker));

  if (failures.length > 0) {
    failures.sort((a, b) => a.position - b.position);
    const summary = failures.map((f) => `image ${f.position} of ${req.count}: ${f.reason}`).join("; ");
    if (!finalAttempt) throw new StepFailure(summary);
    // The article completes without them; the run says which and why.
    await updateRun(deps.db, externalId, { omittedImages: failures });
    deps.logger.warn("images left out after the last attempt", { externalId, omitted: failures });
  }
  return [...stored.values()].sort((a, b) => a.position - b.position);
}

async function generateImage(deps: ArticleImageDeps, externalId: string, req: ImageRequest, slot: ImageSlot, position: number): Promise<StoredImage> {
  const { client, model } = deps.clients.forModel(deps.imageModel);
  const aspectRatio = req.aspectRatio ?? DEFAULT_ASPECT_RATIO;
  const size = imageSizeFor(model, aspectRatio);
  const prompt = imagePrompt(req, slot, position);
  let data: Buffer | undefined;
  for (let tries = 1; !data; tries++) {
    try {
      // Rate limits and outages of the image model wait (paced-call.ts); the tries here are for answers that fail.
      const modelInfo = (signal: AbortSignal) => client.models.retrieve(model, { signal, maxRetries: 0 }).withResponse().then(({ response }) => response.headers);
      const { value: result } = await deps.pacer.run([{ id: deps.imageModel, limits: NO_LIMITS }], { ...deps.turn, tokens: 0 }, IMAGE_TIMEOUT_MS, {
        async call(_, signal) {
          const { data: answer, response } = await client.images
            // dall-e models send URLs unless asked for base64; gpt-image models always send base64.
            .generate({ model, prompt, n: 1, size: size as "1024x1024", ...(model.startsWith("dall-e") ? { response_format: "b64_json" as const } : {}) }, { signal, maxRetries: 0 })
            .withResponse();
          return { value: answer, headers: response.headers };
        },
        probe: (_, signal) => modelInfo(signal),
      });
      const b64 = result.data?.[0]?.b64_json;
      if (!b64) throw new Error(`${deps.imageModel} returned no image data`);
      data = Buffer.from(b64, "base64");
    } catch (error) {
      const failure = error instanceof CallFailed ? error.message : (error as Error).message;
      if (tries >= IMAGE_TRIES) throw new Error(`failed on ${deps.imageModel} after ${tries} tries: ${failure}`);
    }
  }
  const file = readImageFile(data);
  if (!file) throw new Error(`${deps.imageModel} returned bytes that are not a PNG, JPEG or WebP image`);

  const imageId = randomBytes(16).toString("hex");
  const store = deps.stores.writer;
  const key = { imageId, extension: file.extension };
  await store.put(key, data, file.mediaType);
  const saved = await saveImage(deps.db, externalId, {
    position,
    imageId,
    model: deps.imageModel,
    size,
    prompt,
    alt: slot.alt,
    aspectRatio,
    mediaType: file.mediaType,
    width: file.width,
    height: file.height,
    byteSize: data.length,
    sha256: new Bun.CryptoHasher("sha256").update(data).digest("hex"),
    storage: store.kind,
  });
  // Another worker stored this position first: its image is the one the article shows.
  if (saved.imageId !== imageId) await store.remove(key).catch(() => {});
  return saved;
}
