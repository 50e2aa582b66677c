// `npm run gen:client`: writes the OpenAPI document the gateway serves to clients/typescript/openapi.json,
// generates the typed TypeScript client from it into clients/typescript/src/generated, and sets the
// client package's version to the document's info.version, so a package names the API it speaks.
// An argument names another folder (the freshness check in CI generates there and compares).
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createClient } from "@hey-api/openapi-ts";
import { openApiDocument } from "../../gateway/src/openapi/document.ts";

const root = resolve(import.meta.dir, "../..");
const out = resolve(process.argv[2] ?? join(root, "clients/typescript"));
const documentPath = join(out, "openapi.json");
const document = openApiDocument() as { info: { version: string } };

await mkdir(out, { recursive: true });
await Bun.write(documentPath, `${JSON.stringify(document, null, 2)}\n`);
await rm(join(out, "src/generated"), { recursive: true, force: true });
await createClient({
  input: documentPath,
  // Imports end in .js so the compiled package loads in Node's ESM loader as well as in bundlers.
  output: { path: join(out, "src/generated"), module: { extension: ".js" } },
  plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
  logs: { level: "silent" },
});
const manifest = await Bun.file(join(root, "clients/typescript/package.json")).json();
await Bun.write(join(out, "package.json"), `${JSON.stringify({ ...manifest, version: document.info.version }, null, 2)}\n`);
console.log(`generated ${out}`);
