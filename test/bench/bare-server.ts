// The HTTP floor of the benchmark: a bare Bun.serve answering a fixed JSON body of BODY_BYTES on
// PORT, in a process of its own as the gateway is. Prints its port when listening.
const body = JSON.stringify({ success: true, data: "x".repeat(Math.max(0, Number(process.env.BODY_BYTES ?? 8_000) - 30)) });
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  fetch: () => new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } }),
});
console.log(server.port);
