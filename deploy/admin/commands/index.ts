// Every operator command, in the order --help lists them.
import type { AdminCommand } from "../command.ts";
import { accountCommands } from "./accounts.ts";
import { articleCommands } from "./articles.ts";
import { destinationCommands } from "./destinations.ts";
import { modelCommands } from "./models.ts";
import { webhookCommands } from "./webhooks.ts";

export const COMMANDS: AdminCommand[] = [...accountCommands, ...webhookCommands, ...modelCommands, ...articleCommands, ...destinationCommands];
