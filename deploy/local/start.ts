// `npm start`: the whole system on this machine. Ctrl-C stops everything cleanly.
import { ConfigError } from "../../services/kit/src/config.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { localServiceToken } from "./service-token.ts";
import { startStack, type Stack } from "./stack.ts";

let stack: Stack;
try {
  stack = await startStack({ output: "inherit", env: { SERVICE_TOKEN: process.env.SERVICE_TOKEN || localServiceToken() } });
} catch (error) {
  const message = error instanceof ConfigError ? error.message : (error as Error).message;
  console.error(`cannot start: ${message}`);
  process.exit(1);
}

if (stack.simulatorUrl) {
  console.log(`OPENAI_API_KEY is unset: models run on the bundled simulator at ${stack.simulatorUrl} (simulated output, not a real provider)`);
}

const operator = serviceClient(OperatorService, { baseUrl: stack.env.ACCOUNTS_BILLING_URL ?? "http://127.0.0.1:7101", serviceToken: stack.env.SERVICE_TOKEN });
const demo = await operator.ensureDemoTenant({});
if (demo.created) {
  const { account, project, token } = demo.created;
  console.log(`first start: created a demo tenant (account ${account?.id}, project ${project?.id}). Its API key, shown only this once:`);
  console.log(`  ${token}`);
}
console.log(`article generation service ready at ${stack.baseUrl}`);

let stopping = false;
const shutdown = async (code = 0) => {
  if (stopping) return;
  stopping = true;
  console.log("stopping…");
  await stack.stop();
  process.exit(code);
};
process.on("SIGINT", () => shutdown());
process.on("SIGTERM", () => shutdown());

// A process that dies on its own leaves the system incomplete: say which, and stop the rest.
for (const [name, child] of stack.processes) {
  void child.exited.then((code) => {
    if (stopping) return;
    console.error(`${name} exited unexpectedly (code ${code}); stopping the other processes`);
    void shutdown(1);
  });
}
