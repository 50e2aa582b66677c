// PUBLIC_GRPC_WORKLOADS as the operator writes it: accounts (or *) and roles or single methods per
// workload; a grant that names nothing to call, or a name that is neither a role nor a public
// method, stops the gateway at start with the entry named, instead of granting a guess.
import { describe, expect, test } from "bun:test";
import { grantedAccounts, loadActingWorkloads, mayCall } from "../../gateway/src/grpc/acting-workloads.ts";
import { ConfigError } from "../../services/kit/src/config.ts";

const load = (value: string) => loadActingWorkloads({ PUBLIC_GRPC_WORKLOADS: value });
const GET = "articles.api.v1.ArticleService/GetArticle";
const CREATE = "articles.api.v1.ArticleService/CreateArticle";
const PUBLISH = "articles.api.v1.PublishingService/PublishArticle";

describe("PUBLIC_GRPC_WORKLOADS", () => {
  test("roles and methods, per account or for all", () => {
    const grants = load("reporting/exporter=12,15:reader; cms/sync=*:writer,publisher; ops/one=7:GetArticle,articles.api.v1.PublishingService/PublishArticle");
    expect([mayCall(grants, "reporting/exporter", 12, GET), mayCall(grants, "reporting/exporter", 15, CREATE), mayCall(grants, "reporting/exporter", 16, GET)]).toEqual([true, false, false]);
    expect([mayCall(grants, "cms/sync", 99, CREATE), mayCall(grants, "cms/sync", 99, PUBLISH)]).toEqual([true, true]);
    expect([mayCall(grants, "ops/one", 7, GET), mayCall(grants, "ops/one", 7, PUBLISH), mayCall(grants, "ops/one", 7, CREATE)]).toEqual([true, true, false]);
    expect([mayCall(grants, "ops/one", 8, GET), mayCall(grants, "nobody/else", 7, GET)]).toEqual([false, false]);
  });

  test("a call's boundary is the accounts whose grants allow its method and every effect it also has", () => {
    const grants = load("cms/sync=*:reader;cms/sync=12:writer;cms/sync=12,15:publisher;ops/one=7:GetArticle");
    expect(grantedAccounts(grants, "cms/sync", [GET])).toBe("all");
    expect(grantedAccounts(grants, "cms/sync", [CREATE])).toEqual(new Set([12]));
    expect(grantedAccounts(grants, "cms/sync", [PUBLISH])).toEqual(new Set([12, 15]));
    expect(grantedAccounts(grants, "cms/sync", [CREATE, PUBLISH])).toEqual(new Set([12]));
    expect(grantedAccounts(grants, "ops/one", [CREATE])).toEqual(new Set());
    expect(grantedAccounts(grants, "nobody/else", [GET])).toEqual(new Set());
  });

  test("two entries of one workload give each its own accounts' methods", () => {
    const grants = load("cms/sync=*:reader;cms/sync=12:writer");
    expect([mayCall(grants, "cms/sync", 12, CREATE), mayCall(grants, "cms/sync", 13, CREATE), mayCall(grants, "cms/sync", 13, GET)]).toEqual([true, false, true]);
  });

  test("a grant without a role or method is a start-up error naming it and the fix", () => {
    expect(() => load("cms/sync=*")).toThrow(ConfigError);
    expect(() => load("reporting/exporter=12;cms/sync=*:writer")).toThrow(`"reporting/exporter=12" grants no role or method: add one or more of :reader, :writer, :publisher or method names (e.g. "reporting/exporter=12:reader")`);
    expect(() => load("cms/sync=*:")).toThrow("grants no role or method");
  });

  test("a name that is neither a role nor a public method is refused", () => {
    expect(() => load("cms/sync=*:admin")).toThrow(`"admin" in "cms/sync=*:admin" is neither a role (reader, writer, publisher) nor a method of articles.api.v1`);
    expect(() => load("cms/sync=*:CreateApiKey")).toThrow("neither a role");
  });

  test("unset or empty grants nothing", () => {
    expect(loadActingWorkloads({}).size).toBe(0);
    expect(load("").size).toBe(0);
  });
});
