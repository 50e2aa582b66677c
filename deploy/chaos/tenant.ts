// The run's customer: an account on a roomy plan with one project, an API key and a webhook signing
// secret (made through the operator contract, as `npm run admin` does), and a three-step custom
// workflow whose steps each take a little while on the model simulator.
import { Role } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import type { AdminClients } from "../admin/clients.ts";
import { callGateway } from "./articles.ts";

export interface ChaosTenant {
  accountId: bigint;
  projectId: number;
  token: string;
  signingSecret: string;
  articleType: string;
}

/** How long the simulator holds each step's model call: long enough for faults to land mid-step. */
export const STEP_MS = 2500;

/** Every prompt of the run starts with this tag, then the step number and the article's title. */
export const promptTag = (runId: string) => `chaos-${runId}`;

export async function createChaosTenant(admin: AdminClients, baseUrl: string, runId: string): Promise<ChaosTenant> {
  const { operator, webhookSigning } = admin;
  const { plan } = await operator.createPlan({ name: "Chaos plan", monthlyWords: 10_000_000n, requestsPerMinute: 100_000, requestsPerHour: 1_000_000, requestsPerDay: 10_000_000 });
  const { account } = await operator.createAccount({ name: `Chaos ${runId}`, planId: plan!.id });
  const { user } = await operator.createUser({ name: "Chaos client", email: `chaos-${runId}@example.com` });
  await operator.addMember({ accountId: account!.id, userId: user!.id, role: Role.OWNER });
  const { project } = await operator.createProject({ accountId: account!.id, name: "Chaos project" });
  const { token } = await operator.createApiKey({ accountId: account!.id, userId: user!.id });
  const { secret } = await webhookSigning.setSigningSecret({ projectId: project!.id });

  const projectId = Number(project!.id);
  const articleType = `chaos_${runId}`;
  const tag = promptTag(runId);
  const steps = [
    { step_name: "Outline", words: 80, user: `${tag} step 1: outline an article titled "{title}".` },
    { step_name: "Draft", words: 400, user: `${tag} step 2: draft "{title}" from this outline:\n{step_1_output}` },
    { step_name: "Edit", words: 300, user: `${tag} step 3: edit the draft of "{title}" into the final article:\n{step_2_output}` },
  ];
  for (const [i, step] of steps.entries()) {
    const reply = await callGateway(baseUrl, token, "POST", `/v1/projects/${projectId}/workflows`, {
      article_type: articleType,
      step_number: i + 1,
      step_name: step.step_name,
      system: "You write clear, well-structured articles.",
      user: `[[sim:sleep=${STEP_MS}]][[sim:words=${step.words}]]${step.user}`,
      output_format: "markdown",
    });
    if (reply.status !== 201) throw new Error(`creating step ${i + 1} of the chaos workflow: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  return { accountId: account!.id, projectId, token, signingSecret: secret, articleType };
}
