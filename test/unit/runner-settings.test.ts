// generation-runner settings: a thousand articles in flight and a 400 MiB soft memory limit by
// default, both overridable, and a bad value refused naming its variable.
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../services/kit/src/config.ts";
import { loadRunnerConfig } from "../../services/generation-runner/src/config.ts";

describe("runner settings", () => {
  test("defaults: 1000 articles in flight, garbage collected past 400 MiB", () => {
    const config = loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090" });
    expect(config.concurrency).toBe(1000);
    expect(config.memorySoftLimitBytes).toBe(400 * 2 ** 20);
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

  test("image URLs start with PUBLIC_BASE_URL, else the local gateway's port", () => {
    expect(loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090", PORT: "9123" }).publicBaseUrl).toBe("http://127.0.0.1:9123");
    expect(loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090", PUBLIC_BASE_URL: "https://api.example.com/articles/" }).publicBaseUrl).toBe("https://api.example.com/articles");
  });

  test("image bytes go to the S3 bucket when S3_BUCKET is set, else nowhere but Postgres", () => {
    const base = { SIMULATOR_URL: "http://127.0.0.1:8090" };
    expect(loadRunnerConfig(base).imageBucket).toBeUndefined();
    const config = loadRunnerConfig({ ...base, S3_BUCKET: "article-images", S3_ENDPOINT: "http://127.0.0.1:9000", S3_ACCESS_KEY_ID: "key", S3_SECRET_ACCESS_KEY: "secret" });
    expect(config.imageBucket).toEqual({ bucket: "article-images", endpoint: "http://127.0.0.1:9000", region: "us-east-1", accessKeyId: "key", secretAccessKey: "secret", sessionToken: undefined });
  });

  test.each([
    [{ S3_ENDPOINT: "http://127.0.0.1:9000" }, "S3_BUCKET"],
    [{ S3_BUCKET: "article-images", S3_SECRET_ACCESS_KEY: "very-secret-value" }, "S3_ACCESS_KEY_ID"],
    [{ S3_BUCKET: "article-images", S3_ACCESS_KEY_ID: "key" }, "S3_SECRET_ACCESS_KEY"],
    [{ S3_BUCKET: "Not A Bucket", S3_ACCESS_KEY_ID: "key", S3_SECRET_ACCESS_KEY: "very-secret-value" }, "S3_BUCKET"],
    [{ S3_BUCKET: "article-images", S3_ACCESS_KEY_ID: "key", S3_SECRET_ACCESS_KEY: "very-secret-value", S3_ENDPOINT: "ftp://host" }, "S3_ENDPOINT"],
    [{ PUBLIC_BASE_URL: "not a url" }, "PUBLIC_BASE_URL"],
  ])("%o is refused naming %s, never showing the secret", (env, variable) => {
    try {
      loadRunnerConfig({ SIMULATOR_URL: "http://127.0.0.1:8090", ...env });
      throw new Error("expected a configuration error");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(variable);
      expect((error as Error).message).not.toContain("very-secret-value");
    }
  });
});
