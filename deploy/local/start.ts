// `npm start`: the whole system on this machine. Ctrl-C stops everything cleanly, also while it
// is still starting: no process is left behind.
import { ConfigError } from "../../services/kit/src/config.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { SessionService } from "../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { passwordLinkAddress } from "../../services/kit/src/dashboard-links.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { LOCAL_IDENTITY_DIR, localWebhookSecretKey } from "./local-secrets.ts";
import { startStack, type Stack } from "./stack.ts";

let stack: Stack | undefined;
let stopping = false;
const starting = new AbortController();

const shutdown = async (code = 0): Promise<never> => {
  // Already stopping: the first call exits the process.
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  console.log("stopping…");
  await stack?.stop();
  process.exit(code);
};
// Until the stack is up, a signal aborts the start, which stops what it started.
const onSignal = () => (stack ? void shutdown() : starting.abort());
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

try {
  stack = await startStack({ output: "inherit", env: { WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY || localWebhookSecretKey() }, identityDir: LOCAL_IDENTITY_DIR, signal: starting.signal, localServers: true });
} catch (error) {
  if (starting.signal.aborted) {
    console.error("stopped before the system was ready; every process it started has stopped");
    process.exit(1);
  }
  const message = error instanceof ConfigError ? error.message : (error as Error).message;
  console.error(`cannot start: ${message}`);
  process.exit(1);
}
// A signal in the last moment of the start, after the stack's own last check.
if (starting.signal.aborted) await shutdown(1);

if (stack.simulatorUrl) {
  console.log(`OPENAI_API_KEY is unset: models run on the bundled simulator at ${stack.simulatorUrl} (simulated output, not a real provider)`);
}

const asOperator = { baseUrl: stack.env.ACCOUNTS_BILLING_URL ?? "http://127.0.0.1:7101", credential: await stack.identity.credential("operator") };
const operator = serviceClient(OperatorService, asOperator);
let demoUserId: bigint | undefined;
try {
  const demo = await operator.ensureDemoTenant({});
  if (demo.created) {
    const { account, project, token, user } = demo.created;
    demoUserId = user?.id;
    console.log(`first start: created a demo tenant (account ${account?.id}, project ${project?.id}). Its API key, shown only this once:`);
    console.log(`  ${token}`);
  }
} catch (error) {
  console.error(`cannot start: the demo tenant could not be checked (${(error as Error).message})`);
  await shutdown(1);
}
console.log(`article generation service ready at ${stack.baseUrl}`);
// The dashboard, and on the first start a one-time link for the demo user to set a password
// (later: `npm run admin -- user link --user <id>` prints another).
console.log(`dashboard at ${stack.baseUrl}/dashboard/`);
if (demoUserId !== undefined) {
  try {
    const link = await serviceClient(SessionService, asOperator).createPasswordLink({ userId: demoUserId });
    console.log(`  sign in as the demo user with this one-time link (valid 72 hours): ${passwordLinkAddress(stack.baseUrl, link.linkToken)}`);
  } catch (error) {
    console.error(`the demo user's sign-in link could not be made (${(error as Error).message}); npm run admin -- user link --user ${demoUserId} makes one`);
  }
}

// A process that dies on its own leaves the system incomplete: say which, and stop the rest.
for (const [name, child] of stack.processes) {
  void child.exited.then((code) => {
    if (stopping) return;
    console.error(`${name} exited unexpectedly (code ${code}); stopping the other processes`);
    void shutdown(1);
  });
}
