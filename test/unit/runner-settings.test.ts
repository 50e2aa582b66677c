// generation-runner settings: a thousand articles in flight and a 150 MiB soft memory limit by
// default, both overridable, and a bad value refused naming its variable.
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../services/kit/src/config.ts";
import { loadRunnerConfig } from "../../services/generation-runner/src/config.ts";

describe("runner settings", () => {
  test("defaults: 1000 articles in flight, garbage collected past 150 MiB", () => {
    const config = loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090" });
    expect(config.concurrency).toBe(1000);
    expect(config.memorySoftLimitBytes).toBe(150 * 2 ** 20);
  });

  test("RUNNER_CONCURRENCY and RUNNER_MEMORY_MIB are read", () => {
    const config = loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090", RUNNER_CONCURRENCY: "300", RUNNER_MEMORY_MIB: "400" });
    expect(config.concurrency).toBe(300);
    expect(config.memorySoftLimitBytes).toBe(400 * 2 ** 20);
  });

  test.each([
    ["RUNNER_CONCURRENCY", "0"],
    ["RUNNER_MEMORY_MIB", "lots"],
  ])("%s=%s is refused naming the variable", (variable, value) => {
    try {
      loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090", [variable]: value });
      throw new Error("expected a configuration error");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(variable);
    }
  });
});
