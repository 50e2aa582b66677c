// Free ports for tests that run a launcher of their own (`npm start` on ports nobody uses).
import { freePort, portFree } from "../../deploy/local/private-servers.ts";
import { GRPC_PORT_OFFSET, METRICS_PORT_OFFSET } from "../../services/kit/src/config.ts";

export { freePort, portFree };

/**
 * A free port whose neighbours `npm start` derives from it are free too: the gateway's metrics
 * port (+1), a service's gRPC and metrics ports. A launcher given a port whose derived one some
 * other process held refused to start ("port … is already in use").
 */
export async function freeServicePort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const derived = [port + 1, port + GRPC_PORT_OFFSET, port + METRICS_PORT_OFFSET];
    if (derived.every((p) => p < 65536) && (await Promise.all(derived.map(portFree))).every(Boolean)) return port;
  }
}
