// The Python route of docs/grpc.md, run as documented with Debian's packages (protobuf-compiler,
// protobuf-compiler-grpc, python3-grpcio, python3-protobuf): Debian's protoc with
// grpc_python_plugin generates the client from proto/articles/api/v1, and a Python program
// creates an article and follows WatchArticle against the whole stack. Its events are /v1's, and
// data_json keeps whole numbers whole where Struct hands Python floats; a refusal's message reads
// in grpcio as /v1's. npm test's setup installs those packages (deploy/scripts/ensure-python-grpc.sh);
// without them the test fails, naming what is missing and how to install it.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { articleBody } from "../harness/articles.ts";
import { apiClient } from "../harness/http.ts";
import { useStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { openEvents } from "./article-events-support.ts";
import { createWorkflow, marker } from "./generation-support.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const DEBIAN_PYTHON = "/usr/bin/python3";
const imports = (module: string) => existsSync(DEBIAN_PYTHON) && Bun.spawnSync([DEBIAN_PYTHON, "-c", `import ${module}`]).exitCode === 0;

/** The Debian packages the test needs and this machine lacks. */
function missingPackages(): string[] {
  const needs: [string, () => boolean][] = [
    ["protobuf-compiler", () => existsSync("/usr/bin/protoc")],
    ["protobuf-compiler-grpc", () => existsSync("/usr/bin/grpc_python_plugin")],
    ["python3-grpcio", () => imports("grpc")],
    ["python3-protobuf", () => imports("google.protobuf")],
  ];
  return needs.filter(([, present]) => !present()).map(([name]) => name);
}

const out = mkdtempSync(join(tmpdir(), "python-client-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the documented Python client on Debian's grpc tools", () => {
  test("generates with protoc + grpc_python_plugin, watches an article reading whole numbers from data_json, and shows a refusal as /v1 words it", async () => {
    const missing = missingPackages();
    if (missing.length > 0) throw new Error(`the Python client test needs Debian's ${missing.join(", ")}: run \`bash deploy/scripts/ensure-python-grpc.sh\` as root (apt-get install ${missing.join(" ")})`);
    // The command of docs/grpc.md, as written there.
    const generate = Bun.spawnSync(["/usr/bin/protoc", "-Iproto", `--python_out=${out}`, `--grpc_out=${out}`, "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin", "proto/articles/api/v1/articles.proto", "proto/articles/api/v1/publishing.proto", "proto/articles/api/v1/workflows.proto"], { cwd: root });
    expect(generate.stderr.toString()).toBe("");
    expect(generate.exitCode).toBe(0);

    const stack = await useStack();
    const tenant = await createTenant(stack);
    const type = marker("python");
    await createWorkflow(apiClient(stack.baseUrl, tenant.token), tenant.projectId, type, [{ step_name: "Write", user: `[[sim:words=30]] ${type}` }]);
    const run = Bun.spawn([DEBIAN_PYTHON, join(root, "test/api/python/watch_article.py"), out, new URL(stack.publicGrpcUrl).host, tenant.token, String(tenant.projectId), type], { stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const events = stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(events.at(-1).event).toBe("completed");
    const started = events.find((e) => e.event === "step_started");
    expect(started).toMatchObject({ data: { step: 1, name: "Write" }, step_type_in_data: "float", step_type_in_data_json: "int" });

    // The same events, with the same data, as /v1's stream of that article.
    const overHttp = await openEvents(stack.baseUrl, tenant.token, events[0].article, { lastEventId: "0-0" });
    await overHttp.done;
    expect(events.map((e) => [e.id, e.event, e.data])).toEqual(overHttp.events.map((e) => [e.id, e.event, e.data]));

    // grpcio shows a refusal's message as /v1 answers it, ";", ",", "/", "%" and non-ASCII included.
    const given = "caf\u00e9;docs,v2/50%-off";
    const http = await apiClient(stack.baseUrl, tenant.token).post("/v1/articles", articleBody(tenant.projectId, { research_include_domains: [given] }));
    expect(http.body.message).toContain(given);
    const refusal = Bun.spawnSync([DEBIAN_PYTHON, join(root, "test/api/python/refusal_message.py"), out, new URL(stack.publicGrpcUrl).host, tenant.token, String(tenant.projectId), given]);
    expect(refusal.stderr.toString()).toBe("");
    expect(JSON.parse(refusal.stdout.toString())).toEqual({ code: "INVALID_ARGUMENT", details: http.body.message });
  });
});
