// capDeadline shortens a request's deadline past a listener's cap to the cap, in both headers
// Connect reads (gRPC's grpc-timeout with its units, Connect's connect-timeout-ms), on node's
// header object and on fetch's Headers; shorter, absent or unreadable ones are left as sent.
import { describe, expect, test } from "bun:test";
import { capDeadline } from "../../services/kit/src/message-limits.ts";

const CAP_MS = 3_600_000;

describe("capDeadline", () => {
  test("grpc-timeout past the cap, in any unit, becomes the cap in milliseconds", () => {
    for (const sent of ["2H", "61M", "3601S", "3600001m", "99999999H"]) {
      const headers: Record<string, string> = { "grpc-timeout": sent };
      capDeadline(headers, CAP_MS);
      expect({ sent, now: headers["grpc-timeout"] }).toEqual({ sent, now: "3600000m" });
    }
  });

  test("grpc-timeout within the cap, absent or unreadable is left as sent", () => {
    for (const sent of ["1H", "60M", "3600S", "3600000m", "5000000u", "99999999n", "10s", "123456789S", "", "-5S"]) {
      const headers: Record<string, string> = { "grpc-timeout": sent };
      capDeadline(headers, CAP_MS);
      expect(headers["grpc-timeout"]).toBe(sent);
    }
    const none: Record<string, string> = {};
    capDeadline(none, CAP_MS);
    expect(none).toEqual({});
  });

  test("connect-timeout-ms past the cap becomes the cap; within it, or unreadable, is left", () => {
    const cases: [string, string][] = [["86400000", "3600000"], ["3600001", "3600000"], ["3600000", "3600000"], ["250", "250"], ["12345678901", "12345678901"], ["1.5", "1.5"]];
    for (const [sent, now] of cases) {
      const headers = new Headers({ "connect-timeout-ms": sent });
      capDeadline(headers, CAP_MS);
      expect({ sent, now: headers.get("connect-timeout-ms") }).toEqual({ sent, now });
    }
  });

  test("fetch's Headers carry a capped grpc-timeout too (gRPC-web on the Connect listener)", () => {
    const headers = new Headers({ "grpc-timeout": "24H" });
    capDeadline(headers, 600_000);
    expect(headers.get("grpc-timeout")).toBe("600000m");
  });
});
