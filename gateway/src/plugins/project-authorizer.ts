// Project access (view or update) of a caller, asked of accounts-billing and remembered briefly
// (see short-memory.ts): polling an article then costs no call to accounts-billing. Only granted
// access is remembered, keyed by user, project and level; a refusal (404 for another account's
// project, 403 for too little access) is asked again on every request. A user's list of viewable
// projects is remembered the same way, so a project or membership added shows in the
// all-projects listing within half a second, and one removed leaves it as fast.
//
// This is the one place a caller's projects are resolved, so it is also where the caller's reach
// narrows them: a project outside the reach answers exactly as another account's project does
// (NOT_FOUND, before any role is asked about), and the viewable list holds none of them.
import { Code, ConnectError } from "@connectrpc/connect";
import { AccessLevel, type KeyScope, type Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ServiceClients } from "../services.ts";
import { ShortMemory } from "./short-memory.ts";

export type ProjectAccess = "view" | "update";

const LEVEL: Record<ProjectAccess, AccessLevel> = { view: AccessLevel.VIEW, update: AccessLevel.UPDATE };

/**
 * How far a caller reaches within its user's memberships. Unset bounds narrow nothing: a user's
 * unscoped key reaches every project the user may see, on every account the user belongs to.
 */
export interface Reach {
  /** Only projects of these accounts. */
  accountIds?: ReadonlySet<number>;
  /** Only these projects. */
  projectIds?: ReadonlySet<number>;
  /** Reads only: whatever needs update access answers 403 as too little access does. */
  readOnly: boolean;
}

/** The user's own reach, narrowed by nothing. */
export const FULL_REACH: Reach = { readOnly: false };

/** A key's reach: its scope narrows its user's memberships to its own account, to projects of it, or to reads. */
export function keyReach(accountId: number, scope: KeyScope | undefined): Reach {
  if (!scope) return FULL_REACH;
  const projectIds = scope.projectIds.length ? new Set(scope.projectIds.map(Number)) : undefined;
  // A scope's projects are its account's own (accounts-billing checks it), so they bound the account too.
  const accountIds = scope.accountOnly || projectIds ? new Set([accountId]) : undefined;
  return { accountIds, projectIds, readOnly: scope.readOnly };
}

/** Who asks: the acting user and how far the call may reach. */
export interface Reaching {
  userId: number;
  reach: Reach;
}

const outOfReach = () => new ConnectError("Project not found.", Code.NotFound);
const readOnlyRefusal = () => new ConnectError("This key is read-only.", Code.PermissionDenied);

const withinAccounts = (reach: Reach, accountId: bigint | number) => !reach.accountIds || reach.accountIds.has(Number(accountId));
const withinProjects = (reach: Reach, projectId: bigint | number) => !reach.projectIds || reach.projectIds.has(Number(projectId));

export class ProjectAuthorizer {
  private readonly memory = new ShortMemory<Project>();
  private readonly viewableMemory = new ShortMemory<Project[]>();

  constructor(private readonly clients: ServiceClients) {}

  /**
   * The project when the caller reaches it with `access`; throws NOT_FOUND for a project outside
   * the user's accounts or the caller's reach, PERMISSION_DENIED for too little access.
   */
  async authorize({ userId, reach }: Reaching, projectId: bigint | number, access: ProjectAccess): Promise<Project> {
    if (!withinProjects(reach, projectId)) throw outOfReach();
    // A read-only caller's write is refused only once the project is known to be within reach.
    const level = reach.readOnly ? "view" : access;
    let project: Project;
    try {
      project = await this.memory.get(`${userId}:${projectId}:${level}`, () =>
        this.clients.accounts.authorizeProject({ userId: BigInt(userId), projectId: BigInt(projectId), level: LEVEL[level] }).then((reply) => reply.project!),
      );
    } catch (error) {
      // Too little access to a project outside the reach must not confirm that it exists.
      if (error instanceof ConnectError && error.code === Code.PermissionDenied && reach.accountIds && !withinAccounts(reach, await this.accountOf(projectId))) throw outOfReach();
      throw error;
    }
    if (!withinAccounts(reach, project.accountId)) throw outOfReach();
    if (reach.readOnly && access === "update") throw readOnlyRefusal();
    return project;
  }

  /** Every project the caller may view: the user's, on every account they belong to, within the reach. */
  async viewable({ userId, reach }: Reaching): Promise<Project[]> {
    const projects = await this.viewableMemory.get(String(userId), () => this.clients.accounts.listViewableProjects({ userId: BigInt(userId) }).then((reply) => reply.projects));
    return projects.filter((p) => withinAccounts(reach, p.accountId) && withinProjects(reach, p.id));
  }

  /** A project's account (a project never moves between accounts). */
  private async accountOf(projectId: bigint | number): Promise<bigint> {
    return (await this.clients.accounts.getProject({ projectId: BigInt(projectId) })).project!.accountId;
  }
}
