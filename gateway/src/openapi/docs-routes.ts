// /docs: the API reference page, /docs/json: the OpenAPI document. The page's script is Redoc's
// standalone bundle from the pinned npm package, served from here: nothing is loaded from another
// origin, so the page works offline and no third-party script runs beside users' API keys.
import { Elysia } from "elysia";
import { openApiDocument } from "./document.ts";

const ASSET = "redoc.standalone.js";
// Inline styles come from the viewer's CSS-in-JS; its search runs in a blob worker.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Article Generation Service API</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="/docs/json" hide-download-button="false" expand-responses="200,201" required-props-first="true"></redoc>
<script src="/docs/assets/${ASSET}"></script>
</body>
</html>
`;

/** The viewer's bundle, read once from the installed package. */
let bundle: Promise<ArrayBuffer> | undefined;
const viewerBundle = () => (bundle ??= Bun.file(Bun.resolveSync(`redoc/bundles/${ASSET}`, import.meta.dir)).arrayBuffer());

export const docsRoutes = () => {
  const document = JSON.stringify(openApiDocument());
  return new Elysia({ name: "docs-routes" })
    .get("/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP, "x-content-type-options": "nosniff" } }), { detail: { hide: true } })
    .get("/docs/json", () => new Response(document, { headers: { "content-type": "application/json; charset=utf-8" } }), { detail: { hide: true } })
    .get(
      `/docs/assets/${ASSET}`,
      async () => new Response(await viewerBundle(), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" } }),
      { detail: { hide: true } },
    );
};
