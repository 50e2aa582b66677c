import { describe, expect, test } from "bun:test";
import { ConfigError, loadPlatformConfig } from "../../services/kit/src/config.ts";

const base = { SERVICE_TOKEN: "a-service-token-of-length" };

describe("DATABASE_POOL_SIZE", () => {
  test("a service process holds at most 10 connections unless told otherwise", () => {
    expect(loadPlatformConfig(base).databasePoolSize).toBe(10);
    expect(loadPlatformConfig({ ...base, DATABASE_POOL_SIZE: "3" }).databasePoolSize).toBe(3);
  });

  test.each(["0", "101", "many", "2.5"])("%p is refused with the variable named", (value) => {
    expect(() => loadPlatformConfig({ ...base, DATABASE_POOL_SIZE: value })).toThrow(ConfigError);
    expect(() => loadPlatformConfig({ ...base, DATABASE_POOL_SIZE: value })).toThrow(/DATABASE_POOL_SIZE/);
  });
});
