// No placeholder secret starts a process: a database password and WEBHOOK_SECRET_KEY are refused when
// they are placeholders, short or guessable, with one line naming the variable (never the value),
// while random values of every usual shape pass.
import { describe, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderKustomization } from "../../deploy/k8s/render.ts";
import { loadGatewayConfig } from "../../gateway/src/config.ts";
import { ConfigError, loadPlatformConfig } from "../../services/kit/src/config.ts";
import { placeholderIn, secretBytesProblem } from "../../services/kit/src/secret-strength.ts";
import { signingSecretKey } from "../../services/webhook-dispatcher/src/config.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const K8S_PLACEHOLDER = "REPLACE-WITH-openssl-rand-base64-32";

describe("placeholderIn", () => {
  test("random values of every usual shape hold no placeholder", () => {
    const generated = [randomBytes(18).toString("base64url"), randomBytes(32).toString("base64"), randomBytes(16).toString("hex"), randomUUID()];
    for (let i = 0; i < 200; i++) for (const value of generated.map(() => randomBytes(24).toString("base64url"))) expect(placeholderIn(value)).toBeUndefined();
    for (const value of generated) expect(placeholderIn(value)).toBeUndefined();
  });

  test.each([
    K8S_PLACEHOLDER,
    "change-me-to-a-long-random-value",
    "change-me-to-32-random-bytes-base64",
    "CHANGEME-CHANGEME-0123456789",
    "password1234567890123456",
    "Passw0rd-for-the-services-2024",
    "placeholder-value-0123456789",
    "an-example-token-0123456789",
    "my-super-secret-token-0123456789",
    "the-default-token-0123456789",
    "insecure-token-for-local-0123456789",
    "a-test-service-token-value",
    "TEST_service_token_0123456789",
    "todo-set-a-real-token-0123456789",
    "dummy-service-token-0123456789",
    "<your-service-token-goes-here>",
    "your_token_here_0123456789",
    "sk-xxxx-xxxx-xxxx-0123456789abc",
    "$(openssl rand -base64 32)",
  ])("the placeholder %p is found", (value) => {
    expect(placeholderIn(value)).toBeDefined();
  });

  test("placeholder words inside random text count only when they cannot be chance", () => {
    // A short word is a placeholder only on its own; inside random letters it is chance.
    expect(placeholderIn("Kq9testZr7Lm2Vx8Np4Wc6Hd")).toBeUndefined();
    expect(placeholderIn("Kq9-test-Zr7Lm2Vx8Np4Wc6Hd")).toBe("test");
    expect(placeholderIn("test")).toBe("test");
    expect(placeholderIn("Kq9xxxxZr7Lm2Vx8Np4Wc6Hd")).toBeUndefined();
  });
});

describe("identity and database settings", () => {
  const identity = { IDENTITY_TOKEN_FILE: "/run/token", IDENTITY_JWKS: "/run/jwks.json", IDENTITY_ISSUER: "https://issuer.example" };

  test.each(["IDENTITY_TOKEN_FILE", "IDENTITY_JWKS", "IDENTITY_ISSUER"])("loadPlatformConfig and loadGatewayConfig refuse a missing %s, naming it", (variable) => {
    for (const load of [loadPlatformConfig, loadGatewayConfig]) {
      try {
        load({ ...identity, [variable]: undefined });
        throw new Error("expected a configuration error");
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).variable).toBe(variable);
      }
    }
  });

  test.each(["change-me", "REPLACE-ME", "changeit", "your-password"])("a DATABASE_URL whose password is the placeholder %p is refused without showing it", (password) => {
    try {
      loadPlatformConfig({ ...identity, DATABASE_URL: `postgres://articles:${password}@db:5432/articles` });
      throw new Error("expected a configuration error");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe("DATABASE_URL");
      expect((error as ConfigError).message).not.toContain(password);
    }
  });

  test("a real password, or none (trust, peer), is taken", () => {
    const password = randomBytes(18).toString("base64url");
    expect(loadPlatformConfig({ ...identity, DATABASE_URL: `postgres://articles:${password}@db:5432/articles` }).databaseUrl).toContain(password);
    expect(loadPlatformConfig({ ...identity, DATABASE_URL: "postgres://postgres@127.0.0.1:5432/articles" }).identity.tokenFile).toBe("/run/token");
  });

  // The processes themselves: one line on stderr naming the variable, a non-zero exit.
  for (const entry of ["gateway/src/main.ts", "services/accounts-billing/src/main.ts"]) {
    test(`${entry} does not start without its identity token`, async () => {
      const child = Bun.spawn([process.execPath, entry], {
        cwd: root,
        env: { ...process.env, ...identity, IDENTITY_TOKEN_FILE: "/nonexistent/token", DATABASE_URL: "postgres://articles:change-me@127.0.0.1:9/articles" },
        stdout: "ignore",
        stderr: "pipe",
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      clearTimeout(timer);
      const lines = stderr.trim().split("\n").filter(Boolean);
      expect(code).not.toBe(0);
      expect(lines.length).toBe(1);
      // The gateway reads no database; a service stops first on the placeholder password.
      expect(lines[0]).toMatch(entry.startsWith("gateway") ? /IDENTITY_TOKEN_FILE: cannot read/ : /DATABASE_URL: its password is a placeholder/);
      expect(lines[0]).not.toContain("change-me@");
    }, 30_000);
  }
});

describe("WEBHOOK_SECRET_KEY", () => {

  test("200 random keys pass", () => {
    for (let i = 0; i < 200; i++) {
      const key = randomBytes(32);
      expect(secretBytesProblem(key)).toBeUndefined();
      expect(signingSecretKey({ WEBHOOK_SECRET_KEY: key.toString("base64") }).equals(key)).toBe(true);
    }
  });

  test.each([
    ["all-zero bytes", Buffer.alloc(32).toString("base64")],
    ["one byte repeated", Buffer.alloc(32, 0x41).toString("base64")],
    ["a repeated pattern", Buffer.from("0123456789abcdef".repeat(2)).toString("base64")],
    ["few distinct bytes", Buffer.from("aaaaaaaabbbbbbbbccccccccdddddddd").toString("base64")],
    ["the Kubernetes placeholder", K8S_PLACEHOLDER],
    ["a placeholder that decodes to 32 bytes", "changemeChangemeChangemeChangemeChangeme123="],
  ])("%s is refused naming the variable", (_, value) => {
    try {
      signingSecretKey({ WEBHOOK_SECRET_KEY: value });
      throw new Error("expected a configuration error");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe("WEBHOOK_SECRET_KEY");
      expect((error as ConfigError).message).not.toContain(value);
    }
  });
});

describe("deploy/k8s", () => {
  const identity = { IDENTITY_TOKEN_FILE: "/run/token", IDENTITY_JWKS: "/run/jwks.json", IDENTITY_ISSUER: "https://issuer.example" };
  test.each(["base", "overlays/local", "overlays/production"])("%s: every Secret left as shipped stops the processes that read it", (dir) => {
    const secrets = renderKustomization(join(root, "deploy/k8s", dir)).filter((o) => o.kind === "Secret");
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      for (const [key, value] of Object.entries((secret.stringData ?? {}) as Record<string, string>)) {
        if (key === "DATABASE_URL") expect(() => loadPlatformConfig({ ...identity, DATABASE_URL: value })).toThrow(/DATABASE_URL/);
        else if (key === "WEBHOOK_SECRET_KEY") expect(() => signingSecretKey({ WEBHOOK_SECRET_KEY: value })).toThrow(/WEBHOOK_SECRET_KEY/);
        // The optional credentials (a provider key, an image bucket) ship empty, read as unset.
        else expect({ key, value }).toEqual({ key, value: "" });
      }
    }
  });
});
