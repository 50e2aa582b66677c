// The gateway's own metrics and tracing work per request in CPU time: observed-app.ts loaded by a
// client in the same process. Run once per variant in a process of its own: TRACE_VARIANT=none
// (nothing observed), off (metrics, no traces), sampled (metrics and 1% of traces) or every.
// Prints CPU µs per request (the client's included).
import { poll, startObservedApp, type ObservedVariant } from "./observed-app.ts";

const variant = (process.env.TRACE_VARIANT ?? "off") as ObservedVariant;
const app = await startObservedApp(variant);
const REQUESTS = Number(process.env.TRACE_REQUESTS ?? 20_000);
// Warm the JIT, and let the first export load its HTTP client before anything is measured.
await poll(app.url, REQUESTS / 4);
await Bun.sleep(Number(process.env.OTEL_BSP_SCHEDULE_DELAY) + 200);
const before = process.cpuUsage();
await poll(app.url, REQUESTS);
const used = process.cpuUsage(before);
await app.stop();
console.log(JSON.stringify({ variant, cpuMicrosPerRequest: (used.user + used.system) / REQUESTS }));
