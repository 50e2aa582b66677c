// The SSRF guard against real local HTTP servers: what it refuses, what it lets through, and
// that the socket goes to the address that was checked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  isForbiddenAddress,
  safeRequest,
  SafeHttpError,
  type HostResolver,
} from "../../services/kit/src/safe-http.ts";
import { checkUrlShape } from "../../services/kit/src/rules/url-shape.ts";

type Server = ReturnType<typeof Bun.serve>;

let main: Server; // the "allowed" server: trusted in some tests
let other: Server; // a second local port that is never trusted
let hits = { main: 0, other: 0 };

function origin(server: Server): string {
  return `http://127.0.0.1:${server.port}`;
}

async function refusal(promise: Promise<unknown>): Promise<SafeHttpError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(SafeHttpError);
    return err as SafeHttpError;
  }
  throw new Error("expected the request to be refused");
}

beforeAll(() => {
  other = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      hits.other++;
      return new Response("internal secret", { headers: { "content-type": "text/plain" } });
    },
  });
  main = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      hits.main++;
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/echo":
          return Response.json({
            method: req.method,
            host: req.headers.get("host"),
            auth: req.headers.get("authorization"),
            contentType: req.headers.get("content-type"),
            body: await req.text(),
          });
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: "/final" } });
        case "/final":
          return new Response("<p>final page</p>", { headers: { "content-type": "text/html; charset=utf-8" } });
        case "/to-other":
          return new Response(null, { status: 302, headers: { location: `${origin(other)}/` } });
        case "/to-ftp":
          return new Response(null, { status: 301, headers: { location: "ftp://example.com/file" } });
        case "/loop":
          return new Response(null, { status: 302, headers: { location: "/loop" } });
        case "/post-then-see-other":
          return new Response(null, { status: 303, headers: { location: "/echo" } });
        case "/hang":
          return new Promise<Response>(() => {});
        case "/hang-body":
          return new Response(
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode("first part of the body"));
              },
            }),
            { headers: { "content-type": "text/plain" } },
          );
        case "/big":
          return new Response("x".repeat(200_000), { headers: { "content-type": "text/plain" } });
        case "/big-stream":
          return new Response(
            new ReadableStream({
              async pull(controller) {
                controller.enqueue(new TextEncoder().encode("y".repeat(16_384)));
                await Bun.sleep(1);
              },
            }),
            { headers: { "content-type": "text/plain" } },
          );
        case "/json":
          return Response.json({ ok: true });
        default:
          return new Response("hello", { headers: { "content-type": "text/plain" } });
      }
    },
  });
});

afterAll(() => {
  main.stop(true);
  other.stop(true);
});

describe("isForbiddenAddress", () => {
  test.each([
    ["127.0.0.1", "loopback address 127.0.0.1"],
    ["127.8.9.10", "loopback"],
    ["10.1.2.3", "private address 10.1.2.3"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "cloud metadata"],
    ["169.254.0.7", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback address ::1"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped IPv6 address ::ffff:7f00:1 (embeds loopback address 127.0.0.1)"],
    ["::ffff:8.8.8.8", "IPv4-mapped"],
    ["[::1]", "loopback"],
    ["not-an-ip", "not an IP address"],
  ])("%s is refused", (ip, why) => {
    expect(isForbiddenAddress(ip)).toContain(why);
  });

  test.each(["8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111"])(
    "%s is an ordinary public address",
    (ip) => {
      expect(isForbiddenAddress(ip)).toBeNull();
    },
  );
});

describe("checkUrlShape", () => {
  test("accepts http and https", () => {
    expect(checkUrlShape("http://example.com/a")).toBeNull();
    expect(checkUrlShape("https://example.com:8443/a?b=c")).toBeNull();
  });
  test.each(["ftp://example.com/x", "file:///etc/passwd", "javascript:alert(1)", "gopher://x/", "example.com/no-scheme", ""])(
    "refuses %p",
    (url) => {
      expect(checkUrlShape(url)).not.toBeNull();
    },
  );
});

describe("safeRequest refuses internal destinations", () => {
  const internalUrls: [string, () => string][] = [
    ["loopback IPv4", () => `http://127.0.0.1:${main.port}/`],
    ["cloud metadata", () => "http://169.254.169.254/latest/meta-data/"],
    ["loopback IPv6", () => `http://[::1]:${main.port}/`],
    ["private 10/8", () => "http://10.0.0.5/"],
    ["carrier-grade NAT", () => "http://100.64.1.1/"],
    ["unique-local IPv6", () => "http://[fc00::1]/"],
    ["IPv4-mapped loopback", () => `http://[::ffff:127.0.0.1]:${main.port}/`],
    ["a name resolving to loopback", () => `http://localhost:${main.port}/`],
  ];
  test.each(internalUrls)("refuses %s", async (_label, url) => {
    const before = hits.main;
    const err = await refusal(safeRequest(url(), { timeoutMs: 2000 }));
    expect(err.reason).toBe("refused-address");
    expect(hits.main).toBe(before);
  });

  test("tells the caller a name points inside without the address it resolved to, which only the log shows", async () => {
    const logged: string[] = [];
    const logger = { warn: (message: string, fields?: Record<string, unknown>) => logged.push(JSON.stringify({ message, ...fields })) };
    const err = await refusal(safeRequest(`http://localhost:${main.port}/`, { logger }));
    expect(err.message).toBe("refused-address: localhost resolves to a private address, which is not allowed");
    expect(err.message).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/"message":"outbound request failed".*localhost resolves to loopback address (127\.0\.0\.1|::1)/);
  });

  test("an address literal is refused in the caller's own words", async () => {
    const err = await refusal(safeRequest("http://169.254.169.254/latest/meta-data/"));
    expect(err.message).toBe("refused-address: 169.254.169.254 is a private address, which is not allowed");
    expect(err.internal).toContain("cloud metadata endpoint");
  });

  test("one forbidden answer among public ones taints the host; neither address is told", async () => {
    const resolveHost: HostResolver = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.8", family: 4 },
    ];
    const err = await refusal(safeRequest("http://mixed.example.test/", { resolveHost }));
    expect(err.reason).toBe("refused-address");
    expect(err.message).toBe("refused-address: mixed.example.test resolves to a private address, which is not allowed");
    expect(err.message).not.toContain("10.0.0.8");
    expect(err.internal).toContain("10.0.0.8");
  });

  test("non-http schemes are a bad URL", async () => {
    for (const url of ["ftp://example.com/", "file:///etc/passwd"]) {
      const err = await refusal(safeRequest(url));
      expect(err.reason).toBe("bad-url");
    }
  });
});

describe("safeRequest allowances", () => {
  test("allowPrivate reaches a local server by IP and by name", async () => {
    const byIp = await safeRequest(`${origin(main)}/`, { allowPrivate: true });
    expect(byIp.status).toBe(200);
    expect(byIp.body.toString()).toBe("hello");
    expect(byIp.address).toBe("127.0.0.1");

    const byName = await safeRequest(`http://localhost:${main.port}/`, { allowPrivate: true });
    expect(byName.status).toBe(200);
    expect(byName.address).toBe("127.0.0.1");
  });

  test("a trusted origin is allowed, the same host on another port is not", async () => {
    const trustedOrigins = [origin(main)];
    const ok = await safeRequest(`${origin(main)}/`, { trustedOrigins });
    expect(ok.status).toBe(200);

    const before = hits.other;
    const err = await refusal(safeRequest(`${origin(other)}/`, { trustedOrigins }));
    expect(err.reason).toBe("refused-address");
    expect(hits.other).toBe(before);
  });

  test("method, headers and body are sent; Host keeps the original name", async () => {
    const resolveHost: HostResolver = async () => [{ address: "127.0.0.1", family: 4 }];
    const res = await safeRequest(`http://hooks.example.test:${main.port}/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ event: "article.completed" }),
      resolveHost,
      trustedOrigins: [`http://hooks.example.test:${main.port}`],
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({
      method: "POST",
      host: `hooks.example.test:${main.port}`,
      auth: null,
      contentType: "application/json",
      body: '{"event":"article.completed"}',
    });
  });

  test("credentials in the URL become basic auth", async () => {
    const res = await safeRequest(`http://user:p%40ss@127.0.0.1:${main.port}/echo`, { allowPrivate: true });
    expect(JSON.parse(res.body.toString()).auth).toBe(`Basic ${btoa("user:p@ss")}`);
  });
});

describe("safeRequest connects to the checked address only", () => {
  test("the resolver runs once and the socket uses its first answer", async () => {
    let calls = 0;
    // A rebinding resolver: a second lookup would point somewhere else entirely.
    const resolveHost: HostResolver = async () => {
      calls++;
      return [{ address: calls === 1 ? "127.0.0.1" : "10.255.255.1", family: 4 }];
    };
    const res = await safeRequest(`http://rebind.example.test:${main.port}/`, {
      resolveHost,
      trustedOrigins: [`http://rebind.example.test:${main.port}`],
      timeoutMs: 3000,
    });
    expect(res.status).toBe(200);
    expect(res.address).toBe("127.0.0.1");
    expect(calls).toBe(1);
  });

  test("a public first answer followed by a private one never reaches the private server", async () => {
    let calls = 0;
    // Public unicast first (no route offline), then the local server: only the first may be used.
    const resolveHost: HostResolver = async () => {
      calls++;
      return [{ address: calls === 1 ? "198.51.99.7" : "127.0.0.1", family: 4 }];
    };
    const before = hits.main;
    const err = await refusal(
      safeRequest(`http://rebind.example.test:${main.port}/`, { resolveHost, timeoutMs: 500 }),
    );
    expect(["connection", "timeout"]).toContain(err.reason);
    expect(calls).toBe(1);
    expect(hits.main).toBe(before);
  });
});

describe("safeRequest kept connections", () => {
  // Answers with the client port of the connection each request came on.
  let ports: Server;
  beforeAll(() => {
    ports = Bun.serve({ hostname: "0.0.0.0", port: 0, fetch: (req, server) => new Response(String(server.requestIP(req)?.port)) });
  });
  afterAll(() => ports.stop(true));

  const via = async (address: string, keepAlive: boolean) => {
    const resolveHost: HostResolver = async () => [{ address, family: 4 }];
    const res = await safeRequest(`http://hooks.example.test:${ports.port}/`, { allowPrivate: true, keepAlive, resolveHost });
    expect(res.address).toBe(address);
    return res.body.toString();
  };

  test("a kept connection carries the next request to the same judged address", async () => {
    const first = await via("127.0.0.1", true);
    expect(await via("127.0.0.1", true)).toBe(first);
  });

  test("a kept connection never carries a request judged to another address", async () => {
    const first = await via("127.0.0.1", true);
    // Same name and port, judged to another (loopback) address this time: a new connection.
    expect(await via("127.0.0.2", true)).not.toBe(first);
  });

  test("without keepAlive every request has a connection of its own", async () => {
    const first = await via("127.0.0.1", false);
    expect(await via("127.0.0.1", false)).not.toBe(first);
  });
});

describe("safeRequest redirects", () => {
  test("a 3xx is returned as the response when followRedirects is 0", async () => {
    const res = await safeRequest(`${origin(main)}/redirect`, { allowPrivate: true, followRedirects: 0 });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("/final");
    expect(res.url).toBe(`${origin(main)}/redirect`);
  });

  test("redirects are followed when asked, and the final URL is reported", async () => {
    const res = await safeRequest(`${origin(main)}/redirect`, { allowPrivate: true, followRedirects: 3 });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("<p>final page</p>");
    expect(res.url).toBe(`${origin(main)}/final`);
  });

  test("each hop is re-checked: a trusted origin cannot bounce to an untrusted local port", async () => {
    const before = hits.other;
    const err = await refusal(
      safeRequest(`${origin(main)}/to-other`, { trustedOrigins: [origin(main)], followRedirects: 3 }),
    );
    expect(err.reason).toBe("refused-address");
    expect(hits.other).toBe(before);
  });

  test("a redirect to another scheme is a bad URL", async () => {
    const err = await refusal(safeRequest(`${origin(main)}/to-ftp`, { allowPrivate: true, followRedirects: 3 }));
    expect(err.reason).toBe("bad-url");
  });

  test("a redirect loop stops at the limit", async () => {
    const err = await refusal(safeRequest(`${origin(main)}/loop`, { allowPrivate: true, followRedirects: 2 }));
    expect(err.reason).toBe("too-many-redirects");
  });

  test("303 after POST continues as a GET without the body", async () => {
    const res = await safeRequest(`${origin(main)}/post-then-see-other`, {
      allowPrivate: true,
      followRedirects: 1,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const echoed = JSON.parse(res.body.toString());
    expect(echoed.method).toBe("GET");
    expect(echoed.body).toBe("");
  });
});

describe("safeRequest limits", () => {
  test("a server that never answers times out", async () => {
    const started = Date.now();
    const err = await refusal(safeRequest(`${origin(main)}/hang`, { allowPrivate: true, timeoutMs: 300 }));
    expect(err.reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test("a body that stops mid-way times out too", async () => {
    const err = await refusal(safeRequest(`${origin(main)}/hang-body`, { allowPrivate: true, timeoutMs: 300 }));
    expect(err.reason).toBe("timeout");
  });

  test("a body beyond maxResponseBytes is refused (declared length)", async () => {
    const err = await refusal(safeRequest(`${origin(main)}/big`, { allowPrivate: true, maxResponseBytes: 1000 }));
    expect(err.reason).toBe("too-large");
  });

  test("a streamed body beyond maxResponseBytes is aborted", async () => {
    const err = await refusal(
      safeRequest(`${origin(main)}/big-stream`, { allowPrivate: true, maxResponseBytes: 100_000, timeoutMs: 5000 }),
    );
    expect(err.reason).toBe("too-large");
  });

  test("a body within the limit is returned whole", async () => {
    const res = await safeRequest(`${origin(main)}/big`, { allowPrivate: true, maxResponseBytes: 300_000 });
    expect(res.body.length).toBe(200_000);
  });

  test("content types outside acceptContentTypes are rejected", async () => {
    const err = await refusal(
      safeRequest(`${origin(main)}/json`, { allowPrivate: true, acceptContentTypes: ["text/html"] }),
    );
    expect(err.reason).toBe("content-type");
    expect(err.message).toContain("application/json");

    const ok = await safeRequest(`${origin(main)}/final`, { allowPrivate: true, acceptContentTypes: ["text/html"] });
    expect(ok.status).toBe(200);
  });

  test("an unreachable port is a connection failure", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    const err = await refusal(safeRequest(`http://localhost:${port}/`, { allowPrivate: true, timeoutMs: 2000 }));
    expect(err.reason).toBe("connection");
    // Said as "could not connect" to what the caller named, not the address it was judged to.
    expect(err.message).toMatch(new RegExp(`^connection: could not connect to http://localhost:${port} \\(`));
    expect(err.message).not.toMatch(/127\.0\.0\.1|::1/);
    expect(err.internal).toMatch(/ at (127\.0\.0\.1|::1) /);
  });
});
