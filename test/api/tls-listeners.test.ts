// TLS on a service's listeners from mounted certificate files: a workflow-catalog process of its
// own, beside the test stack, serves gRPC and Connect over TLS with a certificate signed by a test
// authority. A stock grpc-js client trusting that authority is served; a plaintext one is not;
// the project's own client reaches the https URL when TLS_CA_FILE names the authority.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Subprocess } from "bun";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { WorkflowCatalogService } from "../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { trustServiceCa } from "../../services/kit/src/tls.ts";
import { eventually } from "../harness/eventually.ts";
import { freePort } from "../harness/ports.ts";
import { stackCredential } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
let stack: TestStack;
let dir: string;
let catalog: Subprocess;
let connectPort: number;
let grpcPort: number;

/** A test authority and a certificate for 127.0.0.1 signed by it, made with openssl. */
async function makeCertificates(into: string) {
  const run = async (...args: string[]) => {
    const child = Bun.spawn(["openssl", ...args], { cwd: into, stdout: "ignore", stderr: "pipe" });
    if ((await child.exited) !== 0) throw new Error(`openssl ${args[0]}: ${await new Response(child.stderr).text()}`);
  };
  await run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=test authority");
  await run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=workflow-catalog");
  await Bun.write(join(into, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await run("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "tls.crt", "-days", "1", "-extfile", "san.ext");
}

beforeAll(async () => {
  stack = await useStack();
  dir = mkdtempSync(join(tmpdir(), "tls-test-"));
  await makeCertificates(dir);
  [connectPort, grpcPort] = [await freePort(), await freePort()];
  catalog = Bun.spawn([process.execPath, "services/workflow-catalog/src/main.ts"], {
    cwd: root,
    env: {
      ...stack.env,
      IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("workflow-catalog"),
      CONNECT_PORT: String(connectPort),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: "0",
      TLS_CERT_FILE: join(dir, "tls.crt"),
      TLS_KEY_FILE: join(dir, "tls.key"),
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const health = () => fetch(`https://127.0.0.1:${connectPort}/grpc.health.v1.Health/Check`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}", tls: { ca: readFileSync(join(dir, "ca.crt"), "utf8") } } as RequestInit).then((r) => r.status, () => 0);
  await eventually(health, (status) => status === 200, 30_000, "the TLS workflow-catalog to answer");
}, 60_000);

afterAll(async () => {
  catalog?.kill("SIGTERM");
  await catalog?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function grpcCatalog(credentials: grpc.ChannelCredentials) {
  const definition = protoLoader.loadSync("articles/workflow_catalog/v1/workflows.proto", { includeDirs: [join(root, "proto")], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  const Service = (grpc.loadPackageDefinition(definition) as any).articles.workflow_catalog.v1.WorkflowCatalogService;
  // The certificate names 127.0.0.1 and localhost; TLS sends no IP address as the server name.
  return new Service(`127.0.0.1:${grpcPort}`, credentials, { "grpc.ssl_target_name_override": "localhost" });
}

const listWorkflows = (client: any) =>
  new Promise<any>((resolve, reject) => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", stackCredential(stack, "gateway").authorization());
    client.ListWorkflows({ project_id: "1" }, metadata, { deadline: Date.now() + 5000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply)));
  });

describe("a service serving TLS from TLS_CERT_FILE and TLS_KEY_FILE", () => {
  test("a grpc-js client trusting the authority is served over TLS", async () => {
    const client = grpcCatalog(grpc.credentials.createSsl(readFileSync(join(dir, "ca.crt"))));
    const reply = await listWorkflows(client);
    // grpc-js leaves an empty list out of the reply object: an answer at all is the point.
    expect(reply).toBeObject();
    client.close();
  });

  test("a plaintext client is not served", async () => {
    const client = grpcCatalog(grpc.credentials.createInsecure());
    const error = await listWorkflows(client).catch((e: grpc.ServiceError) => e);
    expect(error.code).toBe(grpc.status.UNAVAILABLE);
    client.close();
  });

  test("the project's own client reaches the https URL through TLS_CA_FILE", async () => {
    trustServiceCa({ TLS_CA_FILE: join(dir, "ca.crt") });
    const client = serviceClient(WorkflowCatalogService, { baseUrl: `https://127.0.0.1:${connectPort}`, credential: stackCredential(stack, "gateway") });
    expect((await client.listWorkflows({ projectId: 1n })).workflows).toBeArray();
  });
});
