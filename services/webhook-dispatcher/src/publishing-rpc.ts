// gRPC handlers of PublishingService: thin translations between proto messages and the
// destinations and publications of domain/ and publishing/.
import { Code, ConnectError, type Client, type ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Queue } from "bullmq";
import type { AccountsService } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ArticleLifecycleService, ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { PublishingService, type DestinationSchema } from "../../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { invalidFields, precondition } from "../../kit/src/errors.ts";
import { publishOptionsRecord } from "../../kit/src/publish-options.ts";
import { publishingJobId, type PublishingJob } from "../../kit/src/queues.ts";
import { currentRequestId } from "../../kit/src/request-context.ts";
import { currentTraceparent } from "../../kit/src/tracing.ts";
import type { Db } from "./db/client.ts";
import { assertRoomForDestination, checkedDestination, createDestination, deleteDestination, getDestination, listDestinations, openDestination, positiveId, type Destination } from "./domain/destinations.ts";
import { firstContact } from "./publishing/first-contact.ts";
import { postSettings } from "./publishing/post-settings.ts";
import { publisherFor } from "./publishing/publishers.ts";

export interface PublishingRoutesDeps {
  db: Db;
  secretKey: Buffer;
  accounts: Client<typeof AccountsService>;
  articles: Client<typeof ArticleStoreService>;
  lifecycle: Client<typeof ArticleLifecycleService>;
  /** The `publishing` queue, opened when the service starts. */
  queue: () => Queue<PublishingJob>;
  fetch: typeof fetch;
  /** ALLOW_PRIVATE_URLS: plain http sites may be added (local development, tests). */
  allowPlainHttp: boolean;
}

const destinationMessage = (d: Destination): MessageInitShape<typeof DestinationSchema> => ({
  id: BigInt(d.id),
  projectId: BigInt(d.projectId),
  kind: d.kind,
  name: d.name,
  siteUrl: d.siteUrl,
  username: d.username ?? undefined,
  defaultStatus: d.defaults.status,
  defaultCategories: d.defaults.categories,
  defaultTags: d.defaults.tags,
  authorId: d.defaults.authorId === null ? undefined : BigInt(d.defaults.authorId),
  createdAt: timestampFromDate(d.createdAt),
});

export function publishingRoutes(deps: PublishingRoutesDeps) {
  const { db, secretKey } = deps;
  const rules = { allowPlainHttp: deps.allowPlainHttp };
  const ids = (req: { projectId: bigint; destinationId: bigint }) => [positiveId("project_id", req.projectId), positiveId("destination_id", req.destinationId)] as const;

  return (router: ConnectRouter) => {
    router.service(PublishingService, {
      async createDestination(req) {
        const projectId = positiveId("project_id", req.projectId);
        // NOT_FOUND from accounts-billing passes through: no destination for a project that does not exist.
        // The answer carries the caps of the project's plan, whoever adds (the gateway, the operator).
        const { caps } = await deps.accounts.getProject({ projectId: req.projectId });
        const cap = caps?.destinationsPerProject ?? Infinity;
        const input = {
          projectId,
          kind: req.kind,
          name: req.name,
          siteUrl: req.siteUrl,
          username: req.username,
          credential: req.credential,
          defaultStatus: req.defaultStatus,
          defaultCategories: req.defaultCategories,
          defaultTags: req.defaultTags,
          authorId: req.authorId === undefined ? undefined : Number(req.authorId),
        };
        // Every field's own rules first, so the site is only asked about a destination that could be stored.
        const site = checkedDestination(input, rules);
        // A project at its cap makes no outbound request: refused before the site is asked.
        await assertRoomForDestination(db, projectId, cap);
        const warnings = await firstContact(site, input.credential.trim(), deps.fetch);
        return { destination: destinationMessage(await createDestination(db, secretKey, input, rules, cap)), warnings };
      },
      async listDestinations(req) {
        return { destinations: (await listDestinations(db, positiveId("project_id", req.projectId))).map(destinationMessage) };
      },
      async getDestination(req) {
        return { destination: destinationMessage(await getDestination(db, ...ids(req))) };
      },
      async checkDestination(req) {
        const { destination, credential } = await openDestination(db, secretKey, ...ids(req));
        const { refusedField: _field, ...check } = await publisherFor(destination, credential, deps.fetch).check();
        return check;
      },
      async deleteDestination(req) {
        return { deleted: await deleteDestination(db, ...ids(req)) };
      },
      async publishArticle(req) {
        const [projectId, destinationId] = ids(req);
        if (req.externalId === "") throw invalidFields({ external_id: ["external_id is required."] });
        const destination = await getDestination(db, projectId, destinationId);
        const options = publishOptionsRecord(req.options);
        postSettings(destination, options);
        if (req.validateOnly) return { destination: destinationMessage(destination) };
        const { article } = await deps.articles.getArticle({ identifier: req.externalId });
        if (!article || Number(article.projectId) !== projectId) throw new ConnectError("Article not found.", Code.NotFound);
        if (article.status !== "completed" && article.status !== "published") {
          throw precondition(`The article is ${article.status}; it can be published once completed.`, { article: [`The article is ${article.status}; only a finished article can be published.`] });
        }
        const trace = currentTraceparent();
        const requestId = currentRequestId();
        const job: PublishingJob = { externalId: article.externalId, projectId, destinationId, options, requestedAt: new Date().toISOString(), ...(trace ? { trace } : {}), ...(requestId ? { requestId } : {}) };
        // Shown as queued before the job can run, so a fast job's outcome is never overwritten by it.
        const before = article.publications.find((p) => Number(p.destinationId) === destinationId);
        await deps.lifecycle.recordPublication({
          externalId: article.externalId,
          publication: { ...before, destinationId: BigInt(destinationId), destinationKind: destination.kind, state: "queued", error: undefined, versionId: article.currentVersionId, requestedAt: timestampFromDate(new Date(job.requestedAt)), attempts: [] },
        });
        await deps.queue().add("publish", job, { jobId: publishingJobId(job) });
        return { destination: destinationMessage(destination) };
      },
    });
  };
}
