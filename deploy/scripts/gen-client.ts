// `npm run gen:client`: writes the OpenAPI document the gateway serves to clients/typescript/openapi.json
// and generates the typed TypeScript client from it into clients/typescript/src. An argument names
// another folder (the freshness check in CI generates there and compares).
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createClient } from "@hey-api/openapi-ts";
import { openApiDocument } from "../../gateway/src/openapi/document.ts";

const root = resolve(import.meta.dir, "../..");
const out = resolve(process.argv[2] ?? join(root, "clients/typescript"));
const documentPath = join(out, "openapi.json");

await mkdir(out, { recursive: true });
await Bun.write(documentPath, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
await rm(join(out, "src"), { recursive: true, force: true });
await createClient({
  input: documentPath,
  output: { path: join(out, "src") },
  plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
  logs: { level: "silent" },
});
console.log(`generated ${out}`);
