// Runs in a process of its own (the tracer provider is global): starts tracing with the sampler
// settings it is given, makes roots, children and queue hand-offs, flushes to a receiver here, and
// prints what it saw as JSON for test/unit/trace-sampling.test.ts.
import { currentTraceparent, flushTracing, initTracing, inJobSpan, inSpan } from "../../services/kit/src/tracing.ts";

const exported: { traceId: string; name: string }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as { resourceSpans: { scopeSpans: { spans: { traceId: string; name: string }[] }[] }[] };
    for (const r of body.resourceSpans) for (const s of r.scopeSpans) for (const span of s.spans) exported.push({ traceId: span.traceId, name: span.name });
    return Response.json({});
  },
});
// The exporter reads its endpoint from the process's environment.
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiver.port}`;
await initTracing("probe");

const roots = Number(process.env.ROOTS ?? 1);
let kept = 0;
const handedOn: string[] = [];
for (let i = 0; i < roots; i++) {
  await inSpan("root", {}, async (span) => {
    if (span) kept++;
    await inSpan("child", {}, async () => {
      handedOn.push(currentTraceparent() ?? "");
    });
  });
}
// A job handed on by a caller that kept its trace is recorded whatever this process's share.
const keptParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
let keptJobSpan = false;
await inJobSpan("job of a kept trace", keptParent, {}, async () => {
  keptJobSpan = currentTraceparent()!.startsWith("00-0af7651916cd43dd8448eb211c80319c-");
});
// And one left out upstream is left out here too, with its ids passed on unchanged.
const leftOutParent = "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
let leftOutJob = "";
await inJobSpan("job of a left-out trace", leftOutParent, {}, async () => {
  leftOutJob = currentTraceparent() ?? "";
});
await flushTracing();
receiver.stop(true);
console.log(JSON.stringify({ kept, handedOn, keptJobSpan, leftOutJob, exported }));
