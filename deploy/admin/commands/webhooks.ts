// Operator commands of webhook-dispatcher: per-project Standard Webhooks signing secrets.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { flag, id } from "../args.ts";
import { command, type AdminCommand } from "../command.ts";

export const webhookCommands: AdminCommand[] = [
  command({
    name: "webhook-secret set",
    flags: [flag("project", "ID")],
    summary: "sign the project's webhooks with a new secret (replacing any old one); the secret is printed only this once",
    run: async (f, c) => {
      const projectId = id(f, "project");
      const reply = await c.webhookSigning.setSigningSecret({ projectId });
      return { project_id: Number(projectId), secret: reply.secret, created_at: timestampDate(reply.createdAt!).toISOString() };
    },
  }),
  command({
    name: "webhook-secret remove",
    flags: [flag("project", "ID")],
    summary: "stop signing the project's webhooks (the spec's default: unsigned)",
    run: async (f, c) => {
      const projectId = id(f, "project");
      const reply = await c.webhookSigning.removeSigningSecret({ projectId });
      return { project_id: Number(projectId), removed: reply.removed };
    },
  }),
  command({
    name: "webhook-secret status",
    flags: [flag("project", "ID")],
    summary: "whether the project's webhooks are signed, and since when (never the secret)",
    run: async (f, c) => {
      const projectId = id(f, "project");
      const reply = await c.webhookSigning.getSigningStatus({ projectId });
      return {
        project_id: Number(projectId),
        signed: reply.signed,
        secret_created_at: reply.secretCreatedAt ? timestampDate(reply.secretCreatedAt).toISOString() : null,
      };
    },
  }),
];
