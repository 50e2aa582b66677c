// The images an article's content shows: metadata stored with the article, so a read carries
// them without another call. The bytes stay with generation-runner, which serves them.
import type { ArticleImage } from "../db/schema.ts";

const MAX_IMAGES = 5;
const IMAGE_ID = /^[0-9a-f]{32}$/;

/** Collects what is wrong with a completion's images under `images`. */
export function checkArticleImages(images: ArticleImage[], errors: Record<string, string[]>): void {
  const problems: string[] = [];
  if (images.length > MAX_IMAGES) problems.push(`at most ${MAX_IMAGES} images.`);
  const positions = new Set<number>();
  for (const image of images) {
    const at = `image ${image.position}`;
    if (!Number.isInteger(image.position) || image.position < 1 || image.position > MAX_IMAGES) problems.push(`${at}: position must be 1 to ${MAX_IMAGES}.`);
    else if (positions.has(image.position)) problems.push(`${at}: positions must be distinct.`);
    positions.add(image.position);
    if (!IMAGE_ID.test(image.imageId)) problems.push(`${at}: image_id must be 32 lowercase hex digits.`);
    if (!isWebUrl(image.url)) problems.push(`${at}: url must be an http or https URL.`);
    if (!(image.width > 0) || !(image.height > 0)) problems.push(`${at}: width and height must be positive.`);
    if (image.alt.length > 300) problems.push(`${at}: alt must be at most 300 characters.`);
  }
  if (problems.length > 0) errors.images = problems;
}

export function isWebUrl(value: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}
