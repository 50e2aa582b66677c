// The bytes behind an image's public URL, for the gateway's /images/{id}.{ext}: looked up by the
// unguessable id, read from whichever store holds them.
import { notFound } from "../../../kit/src/errors.ts";
import type { Db } from "../db/client.ts";
import { extensionOf } from "./article-images.ts";
import { imageById, type StoredImage } from "./checkpoints.ts";
import type { ImageStores } from "./image-store.ts";

const IMAGE_ID = /^[0-9a-f]{32}$/;

export interface ServedImage {
  image: StoredImage;
  extension: string;
  data: Uint8Array;
}

/** The image and its bytes; NOT_FOUND for an unknown (or malformed) id. */
export async function servedImage(db: Db, stores: ImageStores, imageId: string): Promise<ServedImage> {
  const image = IMAGE_ID.test(imageId) ? await imageById(db, imageId) : undefined;
  if (!image) throw notFound("No such image.");
  const extension = extensionOf(image.mediaType);
  const store = stores.of(image.storage);
  if (!store) throw new Error(`image ${imageId} is kept in ${image.storage}, which this runner has not configured`);
  const data = await store.get({ imageId, extension });
  if (!data) throw new Error(`the bytes of image ${imageId} are missing from ${image.storage}`);
  return { image, extension, data };
}
