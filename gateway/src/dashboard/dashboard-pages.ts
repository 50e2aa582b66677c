// The dashboard's page, styles and script at /dashboard, from the repository's top-level
// dashboard/ folder: the script is bundled from dashboard/src with Bun when first asked for and
// kept in memory. Nothing comes from another origin, and the Content-Security-Policy allows no
// inline script or style: every tenant text is put in the page as text by the script.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Elysia } from "elysia";
import { DASHBOARD_PATH } from "./session-cookie.ts";

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'";

/** The dashboard folder: found upwards from here, so the gateway's bundle (gateway/src) finds it as its sources do. */
function dashboardFolder(): string {
  for (let dir = import.meta.dir; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "dashboard", "index.html"))) return join(dir, "dashboard");
    if (dirname(dir) === dir) throw new Error("the dashboard folder (dashboard/index.html) is missing");
  }
}

let script: Promise<string> | undefined;
async function buildScript(folder: string): Promise<string> {
  const result = await Bun.build({ entrypoints: [join(folder, "src", "main.ts")], target: "browser", minify: true });
  if (!result.success) throw new Error(`cannot build the dashboard: ${result.logs.map((l) => l.message).join("; ")}`);
  return result.outputs[0]!.text();
}

const page = (body: BodyInit, type: string) => new Response(body, { headers: { "content-type": type, "content-security-policy": DASHBOARD_CSP } });

export const dashboardPages = () => {
  const folder = dashboardFolder();
  const index = () => page(Bun.file(join(folder, "index.html")), "text/html; charset=utf-8");
  return new Elysia({ name: "dashboard-pages" })
    // The router answers /dashboard and /dashboard/ alike; the page names its assets by absolute path.
    .get(`${DASHBOARD_PATH}/`, index, { detail: { hide: true } })
    .get(`${DASHBOARD_PATH}/assets/app.js`, async () => page(await (script ??= buildScript(folder).catch((error) => ((script = undefined), Promise.reject(error)))), "text/javascript; charset=utf-8"), { detail: { hide: true } })
    .get(`${DASHBOARD_PATH}/assets/style.css`, () => page(Bun.file(join(folder, "style.css")), "text/css; charset=utf-8"), { detail: { hide: true } });
};
