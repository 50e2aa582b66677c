// Generated-client factory for calls between the project's own processes: the Connect protocol
// (binary protobuf) over HTTP/1.1 with Bun's fetch and its keep-alive pool, the internal
// credential attached, a deadline on every call and a connection that fails reported as
// UNAVAILABLE. Outside clients use the gRPC port.
//
// Unary calls, nearly all the processes make, are made here rather than by Connect's transport,
// which streams each request body through a ReadableStream (sent chunked), reads each reply
// through a stream reader, builds the method's serializers again on every call and, when a call
// ends well, aborts its signal, which costs a finished fetch as much again as a small part of
// sending it. Here both bodies travel whole, serializers are made once per method and the
// deadline is a timer that is cleared (the gateway's CPU per creation, four calls: 6.3-9.6 →
// 3.8-5.2 ms, `npm run bench:cpu -- post`). The wire format, headers, errors and interceptors are
// Connect's own; streaming calls still go through Connect's transport.
import { Code, ConnectError, appendHeaders, createClient, createContextValues, type Client, type Interceptor, type Transport, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { createClientMethodSerializers, createFetchClient, getAbortSignalReason, validateReadWriteMaxBytes } from "@connectrpc/connect/protocol";
import { createTransport, errorFromJsonBytes, requestHeader, trailerDemux, validateResponseWithCompression } from "@connectrpc/connect/protocol-connect";
import { create, type DescMessage, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { traceClientInterceptor, tracingEnabled } from "./tracing.ts";
import type { Credential } from "./workload-identity.ts";
import { serviceTlsOption } from "./tls.ts";
import { currentRequestId, REQUEST_ID_HEADER } from "./request-context.ts";
import { ANSWER_MESSAGE_BYTES, REQUEST_MESSAGE_BYTES } from "./message-limits.ts";

export interface ServiceClientOptions {
  baseUrl: string;
  /** The calling process's identity token (workload-identity.ts). */
  credential: Credential;
  /** Deadline of each call unless the caller sets its own. */
  timeoutMs?: number;
}

/**
 * fetch, with a connection that cannot be made or breaks reported as UNAVAILABLE (as gRPC does),
 * so callers retry it like any other outage; an abort (the deadline, a cancel) stays an abort,
 * which the call reports with its signal's reason.
 */
async function reach(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  try {
    // An https service URL is trusted through TLS_CA_FILE when it is set (tls.ts).
    return await fetch(input, { ...init, ...serviceTlsOption() } as RequestInit);
  } catch (error) {
    if (init?.signal?.aborted || (input instanceof Request && input.signal.aborted)) throw error;
    throw new ConnectError((error as Error).message, Code.Unavailable, undefined, undefined, error);
  }
}

type UnaryMethod = DescMethodUnary<DescMessage, DescMessage>;

interface MethodRoute {
  url: string;
  serialize(message: unknown): Uint8Array;
  parse(bytes: Uint8Array): unknown;
}

/** What a transport's unary calls share. */
interface UnaryCalls {
  baseUrl: string;
  defaultTimeoutMs: number;
  interceptors: Interceptor[];
}

/** Unary calls of the Connect protocol, each request and reply one whole body. */
function unaryCalls({ baseUrl, defaultTimeoutMs, interceptors }: UnaryCalls): Transport["unary"] {
  const routes = new Map<UnaryMethod, MethodRoute>();
  const routeOf = (method: UnaryMethod): MethodRoute => {
    let route = routes.get(method);
    if (!route) {
      const { serialize, parse } = createClientMethodSerializers(method, true);
      route = { url: `${baseUrl.replace(/\/$/, "")}/${method.parent.typeName}/${method.name}`, serialize, parse };
      routes.set(method, route);
    }
    return route;
  };

  const send = async (req: UnaryRequest): Promise<UnaryResponse> => {
    const route = routeOf(req.method as UnaryMethod);
    const response = await reach(req.url, { method: "POST", headers: req.header, signal: req.signal, body: route.serialize(req.message) as Uint8Array<ArrayBuffer> });
    // No compression is offered, so any encoding but identity is refused.
    const { isUnaryError, unaryError } = validateResponseWithCompression("unary", [], true, response.status, response.headers);
    // The listeners' own limit on an answer (message-limits.ts), checked before it is read.
    if (Number(response.headers.get("content-length")) > ANSWER_MESSAGE_BYTES) throw new ConnectError(`an answer larger than ${ANSWER_MESSAGE_BYTES} bytes`, Code.ResourceExhausted);
    const body = await response.bytes();
    const [header, trailer] = trailerDemux(response.headers);
    if (isUnaryError) throw errorFromJsonBytes(body, appendHeaders(header, trailer), unaryError!);
    return { stream: false, service: req.service, method: req.method, header, message: route.parse(body) as never, trailer };
  };
  const call = interceptors.reduceRight<(req: UnaryRequest) => Promise<UnaryResponse>>((next, interceptor) => interceptor(next as never) as never, send);

  return async (method, signal, timeoutMs, header, message, contextValues) => {
    const deadlineMs = timeoutMs === undefined ? defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
    const controller = new AbortController();
    const deadline = deadlineMs === undefined ? undefined : setTimeout(() => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), deadlineMs);
    const cancel = () => controller.abort(getAbortSignalReason(signal!));
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel);
    try {
      const response = await call({
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: routeOf(method as UnaryMethod).url,
        header: requestHeader("unary", true, deadlineMs, header, false),
        contextValues: contextValues ?? createContextValues(),
        message: create(method.input, message),
        signal: controller.signal,
      });
      return response as never;
    } catch (reason) {
      // An aborted call reports why (the deadline, the caller's cancel), not the fetch's AbortError.
      throw controller.signal.aborted ? ConnectError.from(getAbortSignalReason(controller.signal), Code.Canceled) : ConnectError.from(reason);
    } finally {
      clearTimeout(deadline);
      signal?.removeEventListener("abort", cancel);
    }
  };
}

// One transport per credential, address and deadline.
const transports = new WeakMap<Credential, Map<string, Transport>>();

function transportTo(address: ServiceClientOptions): Transport {
  const defaultTimeoutMs = address.timeoutMs ?? 5000;
  const key = `${address.baseUrl}|${defaultTimeoutMs}`;
  let ofCredential = transports.get(address.credential);
  if (!ofCredential) transports.set(address.credential, (ofCredential = new Map()));
  let transport = ofCredential.get(key);
  if (transport) return transport;
  // Asked on every call: a renewed token is sent as soon as the process has read it. The request
  // id of the work in progress goes along (request-context.ts).
  const credential: Interceptor = (next) => (req) => {
    req.header.set("authorization", address.credential.authorization());
    const requestId = currentRequestId();
    if (requestId !== undefined) req.header.set(REQUEST_ID_HEADER, requestId);
    return next(req);
  };
  // The traceparent header only when traces are exported: nothing extra on calls otherwise.
  const interceptors = tracingEnabled() ? [credential, traceClientInterceptor()] : [credential];
  const streaming = createTransport({
    baseUrl: address.baseUrl,
    httpClient: createFetchClient(Object.assign(reach, { preconnect: fetch.preconnect })),
    useBinaryFormat: true,
    interceptors,
    defaultTimeoutMs,
    // Services share one network: compressing between them costs CPU and saves nothing.
    sendCompression: null,
    acceptCompression: [],
    // Answers as large as the listeners write; requests as large as they read.
    ...validateReadWriteMaxBytes(ANSWER_MESSAGE_BYTES, REQUEST_MESSAGE_BYTES, undefined),
  });
  transport = { unary: unaryCalls({ baseUrl: address.baseUrl, defaultTimeoutMs, interceptors }), stream: streaming.stream.bind(streaming) };
  ofCredential.set(key, transport);
  return transport;
}

/** A generated client of one of the project's services. */
export function serviceClient<S extends DescService>(service: S, address: ServiceClientOptions): Client<S> {
  return createClient(service, transportTo(address));
}
