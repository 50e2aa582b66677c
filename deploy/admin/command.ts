// What one operator command is: its spelling, help line and action. Each bounded context has
// a module under commands/ that lists its commands.
import type { Flags } from "./args.ts";
import type { AdminClients } from "./clients.ts";

export interface AdminCommand {
  /** e.g. "plan create" */
  name: string;
  usage: string;
  summary: string;
  run(flags: Flags, clients: AdminClients): Promise<unknown>;
}
