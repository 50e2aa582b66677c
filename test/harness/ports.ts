// Free ports for tests that run a launcher of their own (`npm start` on ports nobody uses).
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "0.0.0.0", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
  });

/** A free port whose gRPC neighbour (port + 100, as `npm start` derives it) is free too. */
export async function freeServicePort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 100 < 65536 && (await portFree(port + 100))) return port;
  }
}
