// Where image bytes live: an S3-compatible bucket through Bun's built-in S3 client when one is
// configured, else the runner's own Postgres table (image_bytes). Either is shared by every runner
// replica. Each image row records which store holds its bytes, so images written before a bucket
// was configured are still served.
import { S3Client } from "bun";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { imageBytes } from "../db/schema.ts";

export type StorageKind = "postgres" | "s3";

export interface ImageStore {
  readonly kind: StorageKind;
  put(key: ImageKey, data: Uint8Array, mediaType: string): Promise<void>;
  /** The bytes, or undefined when the store has none under the key. */
  get(key: ImageKey): Promise<Uint8Array | undefined>;
  remove(key: ImageKey): Promise<void>;
}

export interface ImageKey {
  imageId: string;
  extension: string;
}

export interface S3Settings {
  bucket: string;
  /** Unset: AWS S3 itself, from the region. */
  endpoint?: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The embedded default: bytes in generation_runner.image_bytes. */
export class PostgresImageStore implements ImageStore {
  readonly kind = "postgres";
  constructor(private readonly db: Db) {}

  async put(key: ImageKey, data: Uint8Array): Promise<void> {
    await this.db.insert(imageBytes).values({ imageId: key.imageId, data: Buffer.from(data) }).onConflictDoNothing();
  }

  async get(key: ImageKey): Promise<Uint8Array | undefined> {
    const [row] = await this.db.select({ data: imageBytes.data }).from(imageBytes).where(eq(imageBytes.imageId, key.imageId));
    return row?.data;
  }

  async remove(key: ImageKey): Promise<void> {
    await this.db.delete(imageBytes).where(eq(imageBytes.imageId, key.imageId));
  }
}

/** Any S3-compatible object store (AWS S3, MinIO, R2, …). Objects are article-images/{id}.{ext}. */
export class S3ImageStore implements ImageStore {
  readonly kind = "s3";
  private readonly client: S3Client;

  constructor(settings: S3Settings) {
    this.client = new S3Client({
      bucket: settings.bucket,
      endpoint: settings.endpoint,
      region: settings.region,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      sessionToken: settings.sessionToken,
    });
  }

  private objectKey = (key: ImageKey) => `article-images/${key.imageId}.${key.extension}`;

  async put(key: ImageKey, data: Uint8Array, mediaType: string): Promise<void> {
    await this.client.write(this.objectKey(key), data, { type: mediaType });
  }

  async get(key: ImageKey): Promise<Uint8Array | undefined> {
    try {
      return await this.client.file(this.objectKey(key)).bytes();
    } catch (error) {
      if ((error as { code?: string }).code === "NoSuchKey") return undefined;
      throw error;
    }
  }

  async remove(key: ImageKey): Promise<void> {
    await this.client.delete(this.objectKey(key));
  }
}

/** The store new images go to, and the store of each kind for reading images back. */
export class ImageStores {
  private readonly postgres: PostgresImageStore;
  private readonly s3?: S3ImageStore;

  constructor(db: Db, s3?: S3Settings) {
    this.postgres = new PostgresImageStore(db);
    this.s3 = s3 ? new S3ImageStore(s3) : undefined;
  }

  get writer(): ImageStore {
    return this.s3 ?? this.postgres;
  }

  /** The store of `kind`; an image kept in a bucket that is no longer configured cannot be read. */
  of(kind: StorageKind): ImageStore | undefined {
    return kind === "s3" ? this.s3 : this.postgres;
  }
}
