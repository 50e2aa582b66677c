// The size asked of the image model for an article's aspect ratio (spec 2.7): image models accept
// only a few sizes, so each ratio maps to the accepted size whose shape is nearest (the smallest
// difference of log width/height). The table is in services/generation-runner/README.md.

/** When creation named no ratio. */
export const DEFAULT_ASPECT_RATIO = "1:1";

// gpt-image-1 (and other OpenAI-compatible servers, the simulator among them): square, 3:2, 2:3.
const GPT_IMAGE_SIZES = ["1024x1024", "1536x1024", "1024x1536"];
const ACCEPTED_SIZES: { model: RegExp; sizes: string[] }[] = [
  { model: /^dall-e-3/, sizes: ["1024x1024", "1792x1024", "1024x1792"] },
  // dall-e-2 makes squares only.
  { model: /^dall-e-2/, sizes: ["1024x1024"] },
];

const shapeOf = (pair: string, separator: string) => {
  const [w, h] = pair.split(separator).map(Number);
  return Math.log(w! / h!);
};

/** The accepted size nearest to `aspectRatio` ("16:9") for `model` (the model name, without provider). */
export function imageSizeFor(model: string, aspectRatio: string): string {
  const sizes = ACCEPTED_SIZES.find((m) => m.model.test(model))?.sizes ?? GPT_IMAGE_SIZES;
  const wanted = shapeOf(aspectRatio, ":");
  let best = sizes[0]!;
  for (const size of sizes) if (Math.abs(shapeOf(size, "x") - wanted) < Math.abs(shapeOf(best, "x") - wanted)) best = size;
  return best;
}
