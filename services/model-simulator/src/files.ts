// In-memory Files API: enough for batch input and output files to round-trip through the SDK.

export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: "processed";
  expires_at: number | null;
  status_details: null;
}

export class FileStore {
  private readonly files = new Map<string, { meta: FileObject; content: string }>();
  private sequence = 0;

  add(filename: string, purpose: string, content: string): FileObject {
    this.sequence++;
    const meta: FileObject = {
      id: `file-sim${String(this.sequence).padStart(6, "0")}`,
      object: "file",
      bytes: Buffer.byteLength(content),
      created_at: Math.floor(Date.now() / 1000),
      filename,
      purpose,
      status: "processed",
      expires_at: null,
      status_details: null,
    };
    this.files.set(meta.id, { meta, content });
    return meta;
  }

  meta(id: string): FileObject | undefined {
    return this.files.get(id)?.meta;
  }

  content(id: string): string | undefined {
    return this.files.get(id)?.content;
  }

  list(): FileObject[] {
    return [...this.files.values()].map((f) => f.meta);
  }

  remove(id: string): boolean {
    return this.files.delete(id);
  }
}
