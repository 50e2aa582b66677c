// The kubelet's gRPC probes speak cleartext HTTP/2 only. With TLS on a service's gRPC port
// (TLS_CERT_FILE, overlays/production/grpc-tls.yaml) its pods probe with this instead, as an exec
// probe: `bun deploy/k8s/grpc-health-probe.ts <port> [service]` asks the grpc.health.v1 service on
// 127.0.0.1:<port> (TLS when TLS_CERT_FILE is set) and exits 0 on SERVING, 1 otherwise. The
// certificate is not checked: the probe reaches its own pod, as the kubelet's HTTPS probes do.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "../../proto/gen/grpc/health/v1/health_pb.ts";

const [port, service = ""] = process.argv.slice(2);
if (!port || !/^\d+$/.test(port)) {
  console.error("usage: bun deploy/k8s/grpc-health-probe.ts <port> [service]");
  process.exit(2);
}
const tls = Boolean(process.env.TLS_CERT_FILE?.trim());
const transport = createGrpcTransport({
  baseUrl: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
  nodeOptions: tls ? { rejectUnauthorized: false } : undefined,
  defaultTimeoutMs: 3000,
});
try {
  const { status } = await createClient(Health, transport).check({ service });
  const serving = status === HealthCheckResponse_ServingStatus.SERVING;
  if (!serving) console.error(`${service || "the process"}: ${HealthCheckResponse_ServingStatus[status]}`);
  process.exit(serving ? 0 : 1);
} catch (error) {
  console.error(`health check on port ${port} failed: ${(error as Error).message}`);
  process.exit(1);
}
