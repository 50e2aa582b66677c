// What one operator command is: its spelling, the flags it takes, help line and action. Each
// bounded context has a module under commands/ that lists its commands (commands/index.ts).
import { usageOf, type FlagSpec, type Flags } from "./args.ts";
import type { AdminClients } from "./clients.ts";

export interface AdminCommand {
  /** e.g. "plan create" */
  name: string;
  /** The only flags it accepts; the usage line is made from them. */
  flags: readonly FlagSpec[];
  /** e.g. "--plan ID [--name N]" */
  usage: string;
  summary: string;
  run(flags: Flags, clients: AdminClients): Promise<unknown>;
}

/** A command whose action may read only the flags it declares (a typo there does not compile). */
export function command<const N extends string = never>(definition: {
  name: string;
  flags: readonly FlagSpec<N>[];
  summary: string;
  run(flags: Flags<N>, clients: AdminClients): Promise<unknown>;
}): AdminCommand {
  return { ...definition, usage: usageOf(definition.flags) };
}
