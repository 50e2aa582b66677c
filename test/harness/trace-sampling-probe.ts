// Runs in a process of its own (the tracer provider is global): starts tracing with the sampler
// settings it is given, starts traces as work entering a process does (jobs without a
// traceparent), makes children, calls and hand-offs in them and outside them, flushes to a
// receiver here, and prints what it saw as JSON for test/unit/trace-sampling.test.ts.
import { currentTraceparent, flushTracing, initTracing, inJobSpan, inSpan, traceClientInterceptor, traceServerInterceptor } from "../../services/kit/src/tracing.ts";

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

// A Connect call as the interceptors see it: what the client sends, what the server runs under.
const call = (header = new Headers()) => ({ header, service: { typeName: "probe.v1.Probe" }, method: { name: "Ask" } }) as never;
const sentTraceparent = traceClientInterceptor()(async (req: any) => req.header.get("traceparent") as never);
const served = traceServerInterceptor()(async () => ({ served: currentTraceparent() }) as never);

const roots = Number(process.env.ROOTS ?? 1);
let kept = 0;
const handedOn: string[] = [];
const calledWith: string[] = [];
for (let i = 0; i < roots; i++) {
  await inJobSpan("root", undefined, {}, async () => {
    if (currentTraceparent()!.endsWith("-01")) kept++;
    await inSpan("child", {}, async () => {
      handedOn.push(currentTraceparent() ?? "");
      calledWith.push((await sentTraceparent(call())) as unknown as string);
    });
  });
}
// Outside any trace (a timer's work): calls and hand-offs carry flag 00, and start nothing.
const outsideCall = (await sentTraceparent(call())) as unknown as string;
const outsideHandOff = currentTraceparent();
let outsideChildRan = false;
await inSpan("child outside a trace", {}, async () => {
  outsideChildRan = true;
});
// A call that arrives with flag 00 is served without a span; one with flag 01 joins its trace.
const leftOutCall = (await served(call(new Headers({ traceparent: "00-2af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00" })))) as any;
const keptCall = (await served(call(new Headers({ traceparent: "00-3af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" })))) as any;
// A call that arrives without a traceparent, or with one that cannot be read, starts a trace at
// this process's share.
const freshCall = (await served(call())) as any;
const malformedCall = (await served(call(new Headers({ traceparent: "00-not-a-trace-01" })))) as any;
// A job handed on by a caller that kept its trace is recorded whatever this process's share.
let keptJob = "";
await inJobSpan("job of a kept trace", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", {}, async () => {
  keptJob = currentTraceparent()!;
});
// And one left out upstream is left out here too.
let leftOutJob = "";
await inJobSpan("job of a left-out trace", "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", {}, async () => {
  leftOutJob = currentTraceparent() ?? "";
});
await flushTracing();
receiver.stop(true);
console.log(
  JSON.stringify({ kept, handedOn, calledWith, outsideCall, outsideHandOff, outsideChildRan, leftOutCall: leftOutCall.served, keptCall: keptCall.served, freshCall: freshCall.served, malformedCall: malformedCall.served, keptJob, leftOutJob, exported }),
);
