// Which membership grants which access to a project.

export type Role = "owner" | "admin" | "editor" | "viewer";
export type AccessLevel = "view" | "update";

const LEVELS_OF_ROLE: Record<Role, AccessLevel[]> = {
  owner: ["view", "update"],
  admin: ["view", "update"],
  editor: ["view", "update"],
  viewer: ["view"],
};

export const ROLES = Object.keys(LEVELS_OF_ROLE) as Role[];

export function roleGrants(role: Role, level: AccessLevel): boolean {
  return LEVELS_OF_ROLE[role].includes(level);
}

/** A membership limited to a project list reaches only those projects. */
export function membershipCovers(projectIds: number[] | null, projectId: number): boolean {
  return projectIds === null || projectIds.length === 0 || projectIds.includes(projectId);
}

/**
 * Whether a membership grants `level` on the project: its role grants it, and an update is not
 * on a project the membership holds with view access only.
 */
export function membershipGrants(membership: { role: Role; viewOnlyProjectIds: number[] | null }, projectId: number, level: AccessLevel): boolean {
  if (!roleGrants(membership.role, level)) return false;
  return level === "view" || !membership.viewOnlyProjectIds?.includes(projectId);
}
