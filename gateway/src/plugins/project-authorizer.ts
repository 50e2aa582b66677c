// Project access (view or update) of a user, asked of accounts-billing and remembered briefly
// (see short-memory.ts): polling an article then costs no call to accounts-billing. Only granted
// access is remembered, keyed by user, project and level; a refusal (404 for another account's
// project, 403 for too little access) is asked again on every request. A user's list of viewable
// projects is remembered the same way, so a project or membership added shows in the
// all-projects listing within half a second, and one removed leaves it as fast.
import { AccessLevel, type Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ServiceClients } from "../services.ts";
import { ShortMemory } from "./short-memory.ts";

export type ProjectAccess = "view" | "update";

const LEVEL: Record<ProjectAccess, AccessLevel> = { view: AccessLevel.VIEW, update: AccessLevel.UPDATE };

export class ProjectAuthorizer {
  private readonly memory = new ShortMemory<Project>();
  private readonly viewableMemory = new ShortMemory<Project[]>();

  constructor(private readonly clients: ServiceClients) {}

  /** The project when the user holds `access` to it; throws the service's NOT_FOUND or PERMISSION_DENIED otherwise. */
  authorize(userId: number, projectId: bigint | number, access: ProjectAccess): Promise<Project> {
    return this.memory.get(`${userId}:${projectId}:${access}`, () =>
      this.clients.accounts.authorizeProject({ userId: BigInt(userId), projectId: BigInt(projectId), level: LEVEL[access] }).then((reply) => reply.project!),
    );
  }

  /** Every project the user may view, on every account they belong to. */
  viewable(userId: number): Promise<Project[]> {
    return this.viewableMemory.get(String(userId), () => this.clients.accounts.listViewableProjects({ userId: BigInt(userId) }).then((reply) => reply.projects));
  }
}
