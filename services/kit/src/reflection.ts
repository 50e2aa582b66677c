// gRPC server reflection (grpc.reflection.v1, and v1alpha for older clients) over whatever a
// router serves, so grpcurl and grpcui can list, describe and call every method without the
// .proto files. The descriptors come from the generated code (proto/gen), so they are always the
// ones the service runs. Reflection sits behind the same service credential as every other call
// but health: grpcurl's and grpcui's `-H 'authorization: Bearer …'` is sent on reflection too.
import { toBinary, type DescFile, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import * as v1 from "../../../proto/gen/grpc/reflection/v1/reflection_pb.ts";
import * as v1alpha from "../../../proto/gen/grpc/reflection/v1alpha/reflection_pb.ts";

type Request = v1.ServerReflectionRequest;
// Plain shapes (no type name), so one answer fits the v1 and the v1alpha response alike.
type Answer = NonNullable<MessageInitShape<typeof v1.ServerReflectionResponseSchema>["messageResponse"]>;

/** What reflection knows: the served services, every file they need, and who declares each name. */
export interface ReflectionIndex {
  services: string[];
  files: Map<string, DescFile>;
  symbols: Map<string, DescFile>;
}

/** Indexes the services and all files they import, transitively (well-known types included). */
export function reflectionIndex(services: Iterable<DescService>): ReflectionIndex {
  const files = new Map<string, DescFile>();
  const symbols = new Map<string, DescFile>();
  const addFile = (file: DescFile) => {
    // DescFile.name lacks ".proto"; clients ask by the full path.
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    for (const type of nestedTypes(file)) {
      symbols.set(type.typeName, file);
      if (type.kind === "service") for (const method of type.methods) symbols.set(`${type.typeName}.${method.name}`, file);
    }
    file.dependencies.forEach(addFile);
  };
  const names = new Set<string>();
  for (const service of services) {
    names.add(service.typeName);
    addFile(service.file);
  }
  return { services: [...names].sort(), files, symbols };
}

/** A file and everything it imports, the file itself first, as serialized FileDescriptorProtos. */
function withDependencies(file: DescFile, bytesOf: (file: DescFile) => Uint8Array): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  const visit = (f: DescFile) => {
    if (seen.has(f.name)) return;
    seen.add(f.name);
    out.push(bytesOf(f));
    f.dependencies.forEach(visit);
  };
  visit(file);
  return out;
}

const notFound = (message: string): Answer => ({ case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: message } });

/** The answer to one reflection request; an unknown name is an error answer, never a broken stream. */
export function answerReflection(index: ReflectionIndex, request: Request["messageRequest"], bytesOf: (file: DescFile) => Uint8Array): Answer {
  const files = (file: DescFile | undefined, what: string): Answer =>
    file
      ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file, bytesOf) } }
      : notFound(`${what} not found`);
  switch (request.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: index.services.map((name) => ({ name })) },
      } satisfies Answer;
    case "fileByFilename":
      return files(index.files.get(request.value), `file ${request.value}`);
    case "fileContainingSymbol":
      return files(index.symbols.get(request.value.replace(/^\./, "")), `symbol ${request.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = request.value;
      const file = [...index.files.values()].find((f) => f.extensions.some((e) => e.extendee.typeName === containingType && e.number === extensionNumber));
      return files(file, `extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const typeName = request.value;
      const declared = index.symbols.get(typeName);
      if (!declared) return notFound(`type ${typeName} not found`);
      const numbers = [...index.files.values()].flatMap((f) => [...nestedTypes(f)]).flatMap((t) => (t.kind === "extension" && t.extendee.typeName === typeName ? [t.number] : []));
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: typeName, extensionNumber: numbers } } satisfies Answer;
    }
    default:
      return { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "empty reflection request" } } satisfies Answer;
  }
}

/**
 * Adds both reflection services to a router that already has the service's own routes, and
 * describes all of them (reflection and health included, as grpc-go does).
 */
export function addReflection(router: ConnectRouter): void {
  const served = router.handlers.map((h) => h.service);
  const index = reflectionIndex([...served, v1.ServerReflection, v1alpha.ServerReflection]);
  // Serialized once per file; the embedded descriptors already carry their imports and JSON names.
  const cache = new Map<string, Uint8Array>();
  const bytesOf = (file: DescFile) => {
    let bytes = cache.get(file.name);
    if (!bytes) cache.set(file.name, (bytes = toBinary(FileDescriptorProtoSchema, file.proto)));
    return bytes;
  };
  async function* info(requests: AsyncIterable<Request>) {
    for await (const request of requests) {
      yield { validHost: request.host, originalRequest: request, messageResponse: answerReflection(index, request.messageRequest, bytesOf) };
    }
  }
  router.service(v1.ServerReflection, { serverReflectionInfo: info });
  // v1alpha has the same messages under another package: the same answers fit both.
  router.service(v1alpha.ServerReflection, { serverReflectionInfo: info as never });
}
