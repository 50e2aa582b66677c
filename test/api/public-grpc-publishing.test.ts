// Internal teams' publishing API over gRPC (articles.api.v1.PublishingService on the gateway's
// gRPC port), called as a team would: a stock @grpc/grpc-js client loading the .proto files, an
// API key in the metadata. It runs the operations /v1 runs on the same bodies, so it must answer
// what /v1 answers: destinations without their credentials, every field error at once in a
// google.rpc.BadRequest, another account's project NOT_FOUND, a view-only member's change
// PERMISSION_DENIED, a failed connection check as an answer, and a publish queued on the article.
// Most cases need no site: the destination points at a dead local address (added, with a
// warning); a real WordPress shows a refused credential refused on creation.
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { fromBinary } from "@bufbuild/protobuf";
import { StatusSchema } from "../../proto/gen/google/rpc/status_pb.ts";
import { BadRequestSchema } from "../../proto/gen/google/rpc/error_details_pb.ts";
import { createArticle } from "../harness/articles.ts";
import { apiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createTenant } from "../harness/tenants.ts";
import { startWordPress } from "../harness/wordpress.ts";
import { articleBody, finished, waitForArticle } from "./generation-support.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
/** Nothing listens on port 9 (discard) here: a site that cannot be reached. */
// Named, not an address: what the tenant reads must not tell what the name resolved to.
const DEAD_SITE = "http://localhost:9/";
const PASSWORD = "abcd EFGH ijkl MNOP qrst UVWX";

let stack: TestStack;
let publishing: any;

beforeAll(async () => {
  stack = await useStack();
  const definition = protoLoader.loadSync("articles/api/v1/publishing.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  publishing = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.PublishingService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
});

const keyed = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

const call = (method: string, request: object, token: string) =>
  new Promise<any>((resolve, reject) => publishing[method](request, keyed(token), { deadline: Date.now() + 30_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply))));
const refusal = (method: string, request: object, token: string) =>
  call(method, request, token).then(() => { throw new Error(`${method} was not refused`); }, (error: grpc.ServiceError) => error);

/** The field violations of a refusal's google.rpc.BadRequest (grpc-status-details-bin), by field, sorted. */
function violatedFields(error: grpc.ServiceError): string[] {
  const [bytes] = error.metadata.get("grpc-status-details-bin") as Buffer[];
  const status = fromBinary(StatusSchema, bytes!);
  const badRequest = status.details.map((d) => anyUnpack(d, BadRequestSchema)).find(Boolean) as { fieldViolations: { field: string }[] } | undefined;
  return (badRequest?.fieldViolations ?? []).map((v) => v.field).sort();
}

const destination = (extra: object = {}) => ({
  kind: "wordpress",
  name: "Coffee blog",
  site_url: DEAD_SITE,
  username: "editor",
  application_password: PASSWORD,
  default_categories: ["Guides"],
  default_tags: ["coffee"],
  author_id: "2",
  ...extra,
});

describe("PublishingService over a stock grpc-js client", () => {
  test("creates, lists, reads, checks and deletes a destination as /v1 does, never answering its credential", async () => {
    const tenant = await createTenant(stack);
    const project = String(tenant.projectId);
    const created = await call("CreateDestination", { project_id: project, destination: destination() }, tenant.token);
    expect(created.destination).toMatchObject({ project_id: project, kind: "wordpress", name: "Coffee blog", site_url: DEAD_SITE, username: "editor", default_status: "draft", default_categories: ["Guides"], default_tags: ["coffee"], author_id: "2" });
    // Nothing listens at the site: added all the same, with the warning /v1 gives.
    expect(created.warnings).toEqual([expect.stringContaining("could not be reached")]);
    const id = created.destination.id;
    expect(JSON.stringify(created)).not.toContain(PASSWORD);

    const listed = await call("ListDestinations", { project_id: project }, tenant.token);
    expect(listed.destinations.map((d: any) => d.id)).toEqual([id]);
    expect(JSON.stringify(listed)).not.toContain(PASSWORD);
    const read = await call("GetDestination", { project_id: project, destination_id: id }, tenant.token);
    expect(read.destination).toEqual(listed.destinations[0]);
    expect(Object.keys(read.destination)).not.toContain("application_password");
    // The same destination over HTTP, field for field.
    const overHttp = (await apiClient(stack.baseUrl, tenant.token).get(`/v1/projects/${project}/destinations/${id}`)).body.data;
    expect(overHttp).toMatchObject({ id: Number(id), name: "Coffee blog", site_url: DEAD_SITE, author_id: 2, created_at: expect.any(String) });

    // Nothing answers there: a failed check is an answer with a sentence, not an error.
    const check = await call("CheckDestination", { project_id: project, destination_id: id }, tenant.token);
    expect(check.ok ?? false).toBe(false);
    expect(check.problems).toHaveLength(1);
    expect(check.problems[0]).toMatch(/^The site could not be reached just now \(.*could not reach the site \(connection: could not connect to http:\/\/localhost:9 .*\)\.$/);
    expect(check.problems[0]).not.toMatch(/127\.0\.0\.1|::1/);
    expect(check.user_name).toBeUndefined();
    expect(check.can_create_posts ?? false).toBe(false);

    expect((await call("DeleteDestination", { project_id: project, destination_id: id }, tenant.token)).deleted).toBe(true);
    expect((await call("DeleteDestination", { project_id: project, destination_id: id }, tenant.token)).deleted ?? false).toBe(false);
    expect((await refusal("GetDestination", { project_id: project, destination_id: id }, tenant.token)).code).toBe(grpc.status.NOT_FOUND);
    expect((await call("ListDestinations", { project_id: project }, tenant.token)).destinations ?? []).toEqual([]);
  });

  test("refuses as /v1 does: every field at once in a BadRequest, another account's project, a view-only member's change", async () => {
    const tenant = await createTenant(stack);
    const project = String(tenant.projectId);
    const bad = await refusal("CreateDestination", { project_id: project, destination: destination({ name: "", site_url: "ftp://example.com" }) }, tenant.token);
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(violatedFields(bad)).toEqual(["name", "site_url"]);
    // The gateway's own checks and webhook-dispatcher's are one answer, as over HTTP.
    const overHttp = await apiClient(stack.baseUrl, tenant.token).post(`/v1/projects/${project}/destinations`, { ...destination({ name: "", site_url: "ftp://example.com" }), author_id: 2 });
    expect(overHttp.status).toBe(422);
    expect(Object.keys(overHttp.body.errors).sort()).toEqual(["name", "site_url"]);
    const wrongKind = await refusal("CreateDestination", { project_id: project, destination: { kind: "ghost", name: "Ghost", site_url: "https://ghost.example", application_password: PASSWORD } }, tenant.token);
    expect(violatedFields(wrongKind)).toEqual(["admin_api_key", "application_password"]);

    const { destination: created } = await call("CreateDestination", { project_id: project, destination: destination() }, tenant.token);
    const stranger = await createTenant(stack);
    expect((await refusal("ListDestinations", { project_id: project }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);
    expect((await refusal("GetDestination", { project_id: project, destination_id: created.id }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);
    expect((await refusal("GetDestination", { project_id: String(stranger.projectId), destination_id: created.id }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);
    expect((await refusal("DeleteDestination", { project_id: project, destination_id: created.id }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);

    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    expect((await call("ListDestinations", { project_id: project }, viewer.token)).destinations.map((d: any) => d.id)).toEqual([created.id]);
    expect((await refusal("CreateDestination", { project_id: project, destination: destination() }, viewer.token)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await refusal("CheckDestination", { project_id: project, destination_id: created.id }, viewer.token)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await refusal("DeleteDestination", { project_id: project, destination_id: created.id }, viewer.token)).code).toBe(grpc.status.PERMISSION_DENIED);
  });

  test("tries the credential against the site as /v1 does: one a real WordPress refuses is INVALID_ARGUMENT on application_password, nothing added; the right one is added without warnings", async () => {
    const site = await startWordPress();
    try {
      const tenant = await createTenant(stack);
      const project = String(tenant.projectId);
      const onSite = (password: string) => destination({ site_url: site.url, username: site.username, application_password: password, author_id: undefined });
      const refused = await refusal("CreateDestination", { project_id: project, destination: onSite(PASSWORD) }, tenant.token);
      expect(refused.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(violatedFields(refused)).toEqual(["application_password"]);
      expect(`${refused.details} ${JSON.stringify(refused.metadata.getMap())}`).not.toContain(PASSWORD);
      expect((await call("ListDestinations", { project_id: project }, tenant.token)).destinations ?? []).toEqual([]);
      const added = await call("CreateDestination", { project_id: project, destination: onSite(site.applicationPassword) }, tenant.token);
      expect(added.destination).toMatchObject({ site_url: site.url, username: site.username });
      expect(added.warnings ?? []).toEqual([]);
    } finally {
      await site.stop();
    }
  }, 90_000);

  test("publishes an article: the article comes back as ArticleService returns it, its publication queued as over HTTP", async () => {
    const tenant = await createTenant(stack);
    const project = String(tenant.projectId);
    const api = apiClient(stack.baseUrl, tenant.token);
    const { destination: created } = await call("CreateDestination", { project_id: project, destination: destination() }, tenant.token);
    const article = await createArticle(api, articleBody(tenant.projectId, { title: "Descaling an espresso machine" }));
    const done = await waitForArticle(api, article.external_id, finished, 60_000);
    expect(done.status).toBe("completed");

    const missing = await refusal("PublishArticle", { id: article.external_id }, tenant.token);
    expect(missing.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(violatedFields(missing)).toEqual(["destination_id"]);
    const badOptions = await refusal("PublishArticle", { id: article.external_id, publish: { destination_id: "999999999", slug: "Not A Slug", categories: { names: ["x".repeat(101)] }, publish_at: { seconds: "999999999999999" } } }, tenant.token);
    // The gateway's type checks first, all at once (a time no date can hold among them); the slug's shape is the dispatcher's rule, not reached.
    expect(violatedFields(badOptions)).toEqual(["categories.0", "publish_at"]);
    expect(violatedFields(await refusal("PublishArticle", { id: article.external_id, publish: { destination_id: "999999999" } }, tenant.token))).toEqual(["destination_id"]);

    const published = await call("PublishArticle", { id: String(done.id), publish: { destination_id: created.id, publish_at: { seconds: "1893456000" }, tags: { names: [] } } }, tenant.token);
    expect(published.article).toMatchObject({ id: String(done.id), external_id: article.external_id, status: "completed", project: { id: project, name: "Test project" } });
    expect(published.article.publications).toMatchObject([{ destination_id: created.id, destination_kind: "wordpress", state: "queued" }]);
    const overHttp = (await api.get(`/v1/articles/${article.external_id}`)).body.data;
    expect(overHttp.publications.map((p: any) => p.destination_id)).toEqual([Number(created.id)]);

    const stranger = await createTenant(stack);
    expect((await refusal("PublishArticle", { id: article.external_id, publish: { destination_id: created.id } }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);
  });

  test("an article created over gRPC with publish keeps it, and its publication shows on the article it answers", async () => {
    const tenant = await createTenant(stack);
    const project = String(tenant.projectId);
    const { destination: created } = await call("CreateDestination", { project_id: project, destination: destination() }, tenant.token);
    const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
    const articles = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.ArticleService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
    const articleCall = (method: string, request: object) =>
      new Promise<any>((resolve, reject) => articles[method](request, keyed(tenant.token), { deadline: Date.now() + 30_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply))));
    const input = { project_id: project, title: "Cleaning a grinder", article_type: "blog_post", target_word_count: 150, tone: "friendly", point_of_view: "second_person", language: "en" };

    const refused = await articleCall("CreateArticle", { article: { ...input, publish: { destination_id: "999999999" } } }).then(() => undefined, (e: grpc.ServiceError) => e);
    expect(refused?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(violatedFields(refused!)).toEqual(["publish.destination_id"]);

    const { article } = await articleCall("CreateArticle", { article: { ...input, publish: { destination_id: created.id, tags: { names: ["grinders"] } } } });
    // The site is unreachable: the publication is tried, recorded, and failed at last; the article itself completed.
    const api = apiClient(stack.baseUrl, tenant.token);
    await waitForArticle(api, article.external_id, (a) => a.publications.length > 0, 60_000);
    const { article: read } = await articleCall("GetArticle", { id: article.external_id });
    expect(read.publications).toMatchObject([{ destination_id: created.id, destination_kind: "wordpress" }]);
    expect(["publishing", "failed"]).toContain(read.publications[0].state);
    const told = String(read.publications[0].attempts[0].error);
    expect(read.publications[0].attempts[0]).toMatchObject({ attempt: 1, outcome: expect.stringMatching(/^(retry|failed)$/) });
    expect(told).toContain("could not connect to http://localhost:9");
    expect(told).not.toMatch(/127\.0\.0\.1|::1/);
  });
});
