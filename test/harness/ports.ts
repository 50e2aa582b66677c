// Free ports for tests that run a launcher of their own (`npm start` on ports nobody uses).
import { freePort, portFree } from "../../deploy/local/private-servers.ts";

export { freePort, portFree };

/** A free port whose gRPC neighbour (port + 100, as `npm start` derives it) is free too. */
export async function freeServicePort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 100 < 65536 && (await portFree(port + 100))) return port;
  }
}
