// The operator CLI: `npm run admin -- <command> --flag value …`. JSON on stdout; errors on
// stderr with a non-zero exit. Reaches the services over gRPC with the operator's identity token.
import { ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf } from "../../services/kit/src/errors.ts";
import { ConfigError } from "../../services/kit/src/config.ts";
import { UsageError, parseFlags } from "./args.ts";
import { adminClients, operatorCredential } from "./clients.ts";
import { COMMANDS } from "./commands/index.ts";

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.usage}\n  ${" ".repeat(width)}  ${c.summary}`);
  return [
    "usage: npm run admin -- <command> [--flag value …]",
    "",
    "Talks to the running services over gRPC as the operator. Environment: OPERATOR_TOKEN_FILE, the operator's identity token",
    "(default: the one `npm start` keeps in .local/identity; on Kubernetes: `kubectl -n article-service create token operator --audience article-service`), and the",
    "service addresses ACCOUNTS_BILLING_URL, WORKFLOW_CATALOG_URL, ARTICLE_STORE_URL,",
    "GENERATION_RUNNER_URL, WEBHOOK_DISPATCHER_URL (defaults: http://127.0.0.1:7101 … 7105). `destination add` reads the site's",
    "credential from DESTINATION_CREDENTIAL, else the first line of standard input, asked for without echo on a terminal (never a flag:",
    "shell history and ps keep flags). Lists (--categories, --tags) are comma-separated.",
    "",
    "commands:",
    ...lines,
  ].join("\n");
}

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

async function main(argv: string[]) {
  if (argv.length === 0 || argv.includes("--help") || argv[0] === "help") {
    console.log(help());
    return;
  }
  const name = argv.slice(0, 2).join(" ");
  const command = COMMANDS.find((c) => c.name === name) ?? COMMANDS.find((c) => c.name === argv[0]);
  if (!command) fail(`unknown command "${argv.slice(0, 2).join(" ")}"; run with --help for the list`, 2);
  const rest = argv.slice(command.name.split(" ").length);
  try {
    const result = await command.run(parseFlags(rest, command.flags), adminClients(process.env, operatorCredential(process.env)));
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    if (error instanceof UsageError) fail(`${command.name}: ${error.message}\nusage: npm run admin -- ${[command.name, command.usage].filter(Boolean).join(" ")}`, 2);
    if (error instanceof ConfigError) fail(error.message, 2);
    if (error instanceof ConnectError) {
      const fields = fieldErrorsOf(error);
      fail(JSON.stringify({ error: error.rawMessage, code: error.code, ...(Object.keys(fields).length ? { errors: fields } : {}) }));
    }
    throw error;
  }
}

await main(process.argv.slice(2));
