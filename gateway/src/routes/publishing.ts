// Publishing endpoints (beyond the spec, additive): a project's destinations under
// /v1/projects/{project}/destinations, and POST /v1/articles/{id}/publish. Gates first
// (401/402/429); each route translates HTTP to publishing/publishing-operations.ts.
import { Elysia } from "elysia";
import { presentArticle } from "../../../services/kit/src/public-article.ts";
import type { V1Gate } from "../plugins/caller.ts";
import { v1Mount, type CallerMount } from "../plugins/v1-gate.ts";
import type { PublishingOperations } from "../publishing/publishing-operations.ts";

const TAGS = ["Publishing"];

/** `mount`: /v1 with a key, or the dashboard's API with a session (the same handlers). */
export const publishingRoutes = (gate: V1Gate, publishing: PublishingOperations, mount: CallerMount = v1Mount(gate), at = mount.prefix) =>
  new Elysia({ name: "publishing-routes", seed: at })
    // Destinations share the workflows' limit (project settings); publishing shares the articles'.
    .use(
      new Elysia({ name: "destination-routes", seed: at })
        .use(mount.gateFor("workflows"))
        .get(`${at}/projects/:project/destinations`, async ({ caller, params }) => ({ success: true, data: await publishing.list(caller, params.project) }), {
          detail: { summary: "List the project's publishing destinations (never their credentials)", tags: TAGS },
        })
        .post(
          `${at}/projects/:project/destinations`,
          async ({ caller, params, body, set }) => {
            const { destination, warnings } = await publishing.create(caller, params.project, body);
            set.status = 201;
            return { success: true, data: destination, warnings };
          },
          { detail: { summary: "Add a WordPress or Ghost destination; its credential is write-only", tags: TAGS } },
        )
        .get(`${at}/projects/:project/destinations/:destination`, async ({ caller, params }) => ({ success: true, data: await publishing.get(caller, params.project, params.destination) }), {
          detail: { summary: "Retrieve one destination", tags: TAGS },
        })
        .post(
          `${at}/projects/:project/destinations/:destination/check`,
          async ({ caller, params }) => ({ success: true, data: await publishing.check(caller, params.project, params.destination) }),
          { detail: { summary: "Check the connection: site reachable, credentials accepted, allowed to create posts", tags: TAGS } },
        )
        .delete(
          `${at}/projects/:project/destinations/:destination`,
          async ({ caller, params }) => {
            const deleted = await publishing.delete(caller, params.project, params.destination);
            return { success: true, message: deleted ? "Destination deleted." : "No such destination; nothing was deleted." };
          },
          { detail: { summary: "Delete a destination and its credential (posts already published stay)", tags: TAGS } },
        ),
    )
    .use(
      new Elysia({ name: "publish-routes", seed: at }).use(mount.gateFor("articles")).post(
        `${at}/articles/:id/publish`,
        async ({ caller, params, body, set }) => {
          const { article, project } = await publishing.publish(caller, params.id, body);
          set.status = 202;
          return { success: true, message: "Publication queued.", data: presentArticle(article, project) };
        },
        { detail: { summary: "Publish (or publish again) a finished article to a destination of its project, as a queued job", tags: TAGS } },
      ),
    );
