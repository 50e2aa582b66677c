// Ports handed out for stacks and tests: free, outside the range outgoing connections take their
// source ports from, and never handed out twice (nor next to one another at the offsets the
// processes derive their gRPC and metrics ports at).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { freePort, portFree } from "../../deploy/local/private-servers.ts";
import { GRPC_PORT_OFFSET, METRICS_PORT_OFFSET } from "../../services/kit/src/config.ts";

test("a hundred ports: distinct, apart by more than the derived offsets, free, outside the outgoing range", async () => {
  const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
  const ports: number[] = [];
  for (let i = 0; i < 100; i++) ports.push(await freePort());
  for (const port of ports) {
    expect(port < low || port > high).toBe(true);
    expect(await portFree(port)).toBe(true);
  }
  for (const a of ports) for (const b of ports) if (a !== b) expect([1, GRPC_PORT_OFFSET, METRICS_PORT_OFFSET]).not.toContain(Math.abs(a - b));
  expect(new Set(ports).size).toBe(100);
});
