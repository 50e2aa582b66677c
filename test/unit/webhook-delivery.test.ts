// One delivery attempt against real local HTTP receivers: what counts as success, what is
// retried, what is refused without contacting anyone (ALLOW_PRIVATE_URLS false), and the retry
// schedule that follows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net, { type AddressInfo } from "node:net";
import type { HostResolver } from "../../services/kit/src/safe-http.ts";
import { deliverWebhook, type DeliveryOptions } from "../../services/webhook-dispatcher/src/domain/deliver-webhook.ts";
import { backoffAfter, nextStep } from "../../services/webhook-dispatcher/src/domain/retry-schedule.ts";

type Server = ReturnType<typeof Bun.serve>;
interface Received {
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

let receiver: Server;
const received: Received[] = [];
const hits = (path: string) => received.filter((r) => r.path === path).length;

beforeAll(() => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      received.push({ path, method: req.method, headers: Object.fromEntries(req.headers), body: await req.text() });
      switch (path) {
        case "/ok":
          return new Response("thanks");
        case "/accepted":
          return new Response(null, { status: 202 });
        case "/no-content":
          return new Response(null, { status: 204 });
        case "/broken":
          return new Response("oops", { status: 500 });
        case "/gone":
          return new Response("no such hook", { status: 410 });
        case "/moved":
          return new Response(null, { status: 301, headers: { location: "/ok" } });
        case "/elsewhere":
          return new Response(null, { status: 307, headers: { location: "/ok" } });
        case "/hang":
          return new Promise<Response>(() => {});
        case "/chatty":
          return new Response("z".repeat(2 * 1024 * 1024));
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
});

afterAll(() => receiver.stop(true));

const local = (path: string) => `http://127.0.0.1:${receiver.port}${path}`;
const open: DeliveryOptions = { allowPrivate: true, timeoutMs: 2000 };
const guarded: DeliveryOptions = { allowPrivate: false, timeoutMs: 2000 };
const body = JSON.stringify({ success: true, data: { external_id: "f3c1b9a2-0000-4000-8000-000000000001" } });

describe("deliverWebhook", () => {
  test("POSTs the body as application/json with the given headers", async () => {
    const result = await deliverWebhook(local("/ok"), body, { "webhook-id": "msg_1_2" }, open);
    expect(result).toMatchObject({ succeeded: true, refused: false, statusCode: 200 });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.attemptedAt).toBeInstanceOf(Date);
    const request = received.findLast((r) => r.path === "/ok")!;
    expect(request.method).toBe("POST");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe("msg_1_2");
    expect(request.body).toBe(body);
  });

  test("any 2xx is a success", async () => {
    for (const path of ["/accepted", "/no-content"]) {
      const result = await deliverWebhook(local(path), body, {}, open);
      expect(result.succeeded).toBe(true);
    }
  });

  test("4xx and 5xx are failures with the status code, open to retry", async () => {
    for (const [path, status] of [["/broken", 500], ["/gone", 410], ["/missing", 404]] as const) {
      const result = await deliverWebhook(local(path), body, {}, open);
      expect(result).toMatchObject({ succeeded: false, refused: false, statusCode: status, error: `receiver answered ${status}` });
    }
  });

  test("a redirect is a failure and is not followed", async () => {
    const before = hits("/ok");
    for (const [path, status] of [["/moved", 301], ["/elsewhere", 307]] as const) {
      const result = await deliverWebhook(local(path), body, {}, open);
      expect(result).toMatchObject({ succeeded: false, refused: false, statusCode: status });
      expect(result.error).toContain("redirects are not followed");
    }
    expect(hits("/ok")).toBe(before);
  });

  test("a receiver that never answers times out", async () => {
    const started = Date.now();
    const result = await deliverWebhook(local("/hang"), body, {}, { allowPrivate: true, timeoutMs: 300 });
    expect(result).toMatchObject({ succeeded: false, refused: false });
    expect(result.statusCode).toBeUndefined();
    expect(result.error).toContain("timeout");
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test("a closed port is a connection failure", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    const result = await deliverWebhook(`http://127.0.0.1:${port}/`, body, {}, open);
    expect(result).toMatchObject({ succeeded: false, refused: false });
    expect(result.error).toContain("connection");
  });

  test("an answer beyond the response cap is a failure", async () => {
    const result = await deliverWebhook(local("/chatty"), body, {}, open);
    expect(result).toMatchObject({ succeeded: false, refused: false });
    expect(result.error).toContain("too-large");
  });
});

describe("deliverWebhook keeps connections", () => {
  /**
   * A receiver speaking HTTP/1.1 straight over TCP, so that it really closes a connection left idle
   * for `keepAliveMs` after an answer (as servers in front of receivers do); counts connections.
   */
  async function countingReceiver(keepAliveMs: number) {
    let connections = 0;
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      let pending = Buffer.alloc(0);
      let idle: ReturnType<typeof setTimeout> | undefined;
      socket.on("data", (chunk: Buffer) => {
        clearTimeout(idle);
        pending = Buffer.concat([pending, chunk]);
        const headEnd = pending.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(pending.subarray(0, headEnd).toString())?.[1] ?? 0);
        if (pending.length < headEnd + 4 + length) return;
        pending = pending.subarray(headEnd + 4 + length);
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok");
        idle = setTimeout(() => socket.end(), keepAliveMs);
      });
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const close = () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    };
    return { url, connections: () => connections, close };
  }

  test("deliveries to one receiver, one after another, share a connection", async () => {
    const receiver = await countingReceiver(5_000);
    for (let i = 0; i < 5; i++) expect((await deliverWebhook(receiver.url, body, {}, open)).succeeded).toBe(true);
    expect(receiver.connections()).toBe(1);
    await receiver.close();
  });

  test("a receiver that closes idle connections still gets every delivery, none counted failed", async () => {
    const receiver = await countingReceiver(30);
    for (let i = 0; i < 4; i++) {
      expect((await deliverWebhook(receiver.url, body, {}, open)).succeeded).toBe(true);
      await Bun.sleep(60);
    }
    expect(receiver.connections()).toBeGreaterThan(1);
    await receiver.close();
  });
});

describe("deliverWebhook refuses internal destinations when private URLs are not allowed", () => {
  const refusals: [string, () => string, string][] = [
    ["loopback IPv4", () => local("/ok"), "127.0.0.1 is a private address, which is not allowed"],
    ["cloud metadata", () => "http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a private address, which is not allowed"],
    ["loopback IPv6", () => `http://[::1]:${receiver.port}/ok`, "::1 is a private address, which is not allowed"],
    ["IPv4-mapped loopback", () => `http://[::ffff:127.0.0.1]:${receiver.port}/ok`, "::ffff:7f00:1 is a private address, which is not allowed"],
    ["a private network address", () => "http://10.20.30.40/hook", "10.20.30.40 is a private address, which is not allowed"],
  ];
  test.each(refusals)("refuses %s without sending anything", async (_label, url, why) => {
    const before = received.length;
    const result = await deliverWebhook(url(), body, {}, guarded);
    expect(result).toMatchObject({ succeeded: false, refused: true });
    expect(result.error).toContain("refused-address");
    expect(result.error).toContain(why);
    expect(received.length).toBe(before);
  });

  test("refuses a hostname that resolves to a private address", async () => {
    const resolveHost: HostResolver = async () => [{ address: "192.168.7.7", family: 4 }];
    const logged: string[] = [];
    const logger = { warn: (message: string, fields?: Record<string, unknown>) => logged.push(JSON.stringify({ message, ...fields })) };
    const result = await deliverWebhook("http://hooks.customer.test/receive", body, {}, { ...guarded, resolveHost, logger });
    expect(result).toMatchObject({ succeeded: false, refused: true, error: "refused-address: hooks.customer.test resolves to a private address, which is not allowed" });
    // The delivery log is the tenant's to read: the address the name resolved to is only in the service's log.
    expect(result.error).not.toContain("192.168.7.7");
    expect(logged.join("\n")).toContain("hooks.customer.test resolves to private address 192.168.7.7");
  });

  test("refuses localhost by name through the system resolver", async () => {
    const before = received.length;
    const result = await deliverWebhook(`http://localhost:${receiver.port}/ok`, body, {}, guarded);
    expect(result).toMatchObject({ succeeded: false, refused: true });
    expect(result.error).toBe("refused-address: localhost resolves to a private address, which is not allowed");
    expect(received.length).toBe(before);
  });

  test("refuses schemes other than http and https", async () => {
    const result = await deliverWebhook("ftp://files.example.com/hook", body, {}, guarded);
    expect(result).toMatchObject({ succeeded: false, refused: true });
    expect(result.error).toContain("bad-url");
  });
});

describe("retry schedule", () => {
  const policy = { attempts: 3, backoffMs: [10_000, 20_000, 30_000] };

  test("the wait before attempt k+1 is the k-th value, the last one repeating", () => {
    expect([1, 2, 3, 4, 5].map((k) => backoffAfter(k, [10_000, 20_000, 30_000]))).toEqual([10_000, 20_000, 30_000, 30_000, 30_000]);
    expect([1, 2, 3].map((k) => backoffAfter(k, [300, 600]))).toEqual([300, 600, 600]);
  });

  test("failures are retried until the last attempt, then given up with the last error", () => {
    const failed = { succeeded: false, refused: false, error: "receiver answered 500" };
    expect(nextStep(failed, 1, policy)).toEqual({ kind: "retry", delayMs: 10_000 });
    expect(nextStep(failed, 2, policy)).toEqual({ kind: "retry", delayMs: 20_000 });
    expect(nextStep(failed, 3, policy)).toEqual({ kind: "give-up", reason: "all 3 attempts failed; last: receiver answered 500" });
    expect(nextStep(failed, 4, { attempts: 5, backoffMs: policy.backoffMs })).toEqual({ kind: "retry", delayMs: 30_000 });
  });

  test("a success ends the delivery; a refused URL gives up at once", () => {
    expect(nextStep({ succeeded: true, refused: false }, 2, policy)).toEqual({ kind: "done" });
    const refused = { succeeded: false, refused: true, error: "refused-address: 127.0.0.1 is a private address, which is not allowed" };
    expect(nextStep(refused, 1, policy)).toEqual({
      kind: "give-up",
      reason: "refused without retrying: refused-address: 127.0.0.1 is a private address, which is not allowed",
    });
  });
});
