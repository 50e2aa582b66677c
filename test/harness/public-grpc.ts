// The public gRPC API's three services as an outside client calls them: a stock @grpc/grpc-js
// client loading the .proto files (keepCase, int64 as strings), on a gateway's gRPC port.
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const root = fileURLToPath(new URL("../../", import.meta.url));

export type PublicClients = Record<"ArticleService" | "WorkflowService" | "PublishingService", any>;

export function publicClients(grpcPort: number): PublicClients {
  const definition = protoLoader.loadSync(["articles/api/v1/articles.proto", "articles/api/v1/workflows.proto", "articles/api/v1/publishing.proto"], {
    includeDirs: [`${root}proto`],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const v1 = (grpc.loadPackageDefinition(definition) as any).articles.api.v1;
  const clients: any = {};
  for (const service of ["ArticleService", "WorkflowService", "PublishingService"]) clients[service] = new v1[service](`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
  return clients;
}

export const closeClients = (clients: Record<string, any> | undefined) => Object.values(clients ?? {}).forEach((client) => client.close());
