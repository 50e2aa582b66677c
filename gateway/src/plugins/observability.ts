// Per-request metrics, traces, request ids and the access log of the gateway, as one wrapper
// around the app's fetch: no lifecycle hook runs per request. The route label is the template the
// path matches (a trie of the app's routes, built once), never the path itself, so ids never
// become labels (nor does the access line carry a query, which may hold a client's data).
import type { Elysia } from "elysia";
import { SpanKind, SpanStatusCode, context } from "@opentelemetry/api";
import { httpDuration, httpRequests } from "../../../services/kit/src/metrics.ts";
import type { CounterCell, HistogramCell } from "../../../services/kit/src/metric-series.ts";
import { openIncomingSpan, tracingEnabled } from "../../../services/kit/src/tracing.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { requestIdOf, withRequestId as answerWithRequestId } from "./request-ids.ts";
import { callerFields, withRequestContext, type RequestContext } from "../../../services/kit/src/request-context.ts";
import { sampled } from "../../../services/kit/src/call-log.ts";

interface Node {
  statics: Map<string, Node>;
  param?: Node;
  wildcard?: string;
  template?: string;
}

const newNode = (): Node => ({ statics: new Map() });

/** Builds the trie of route templates ("/v1/articles/:id" matches "/v1/articles/abc"). */
export function routeMatcher(paths: Iterable<string>): (path: string) => string {
  const root = newNode();
  for (const template of paths) {
    let node = root;
    for (const segment of template.split("/").slice(1)) {
      if (segment === "*") {
        node.wildcard = template;
        break;
      }
      node = segment.startsWith(":") ? (node.param ??= newNode()) : node.statics.get(segment) ?? (node.statics.set(segment, newNode()), node.statics.get(segment)!);
    }
    if (!template.endsWith("*")) node.template ??= template;
  }
  return (path) => {
    let node: Node | undefined = root;
    let wildcard: string | undefined;
    let start = 1;
    while (node) {
      if (node.wildcard) wildcard = node.wildcard;
      if (start > path.length) return node.template ?? wildcard ?? "unmatched";
      let end = path.indexOf("/", start);
      if (end < 0) end = path.length;
      const segment = path.slice(start, end);
      node = node.statics.get(segment) ?? (segment === "" ? undefined : node.param);
      start = end + 1;
    }
    return wildcard ?? "unmatched";
  };
}

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

interface RouteSeries {
  duration: HistogramCell;
  byStatus: Map<number, CounterCell>;
}

/**
 * Counts and times every request by route template, method and status; when traces are
 * exported, answers it inside a server span that continues an incoming traceparent; gives every
 * answer its X-Request-Id and, with a logger, writes one access line per request (request id,
 * method, route, status, milliseconds, and the account and key id once the gates knew them).
 * Call after every route is added and before listen.
 */
export function observeRequests(app: Elysia<any, any, any, any, any, any, any>, opts: { metrics: boolean; logger?: Logger; accessLogSample?: number }): void {
  const share = opts.accessLogSample ?? 1;
  const tracing = tracingEnabled();
  const access = opts.logger;
  let match: ((path: string) => string) | undefined;
  const series = new Map<string, RouteSeries>();
  const seriesOf = (route: string, method: string): RouteSeries => {
    const key = method + " " + route;
    let s = series.get(key);
    if (!s) series.set(key, (s = { duration: httpDuration.cell({ route, method }), byStatus: new Map() }));
    return s;
  };
  const record = (s: RouteSeries, route: string, method: string, status: number, started: number) => {
    s.duration.observe((performance.now() - started) / 1000);
    let counter = s.byStatus.get(status);
    if (!counter) s.byStatus.set(status, (counter = httpRequests.cell({ route, method, status: String(status) })));
    counter.value++;
  };

  const observed = (fetch: (request: Request) => unknown) => (request: Request) => {
    match ??= routeMatcher(app.routes.map((r) => r.path));
    const url = request.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const queryStart = url.indexOf("?", pathStart);
    const route = match(queryStart < 0 ? url.slice(pathStart) : url.slice(pathStart, queryStart));
    const method = METHODS.has(request.method) ? request.method : "OTHER";
    const started = performance.now();
    const s = opts.metrics ? seriesOf(route, method) : undefined;
    const id = requestIdOf(request);
    // Everything the request does (its calls, its log lines) carries its id; the gates note in it
    // whom the request acts for.
    const work: RequestContext = { id };
    const answer = (response: Response) => {
      if (s) record(s, route, method, response.status, started);
      // Every refusal and failure has its line; successes at the rate of ACCESS_LOG_SAMPLE.
      if (response.status >= 400 || sampled(share)) {
        access?.info("request", { request_id: id, method, route, status: response.status, ms: Math.round((performance.now() - started) * 10) / 10, ...callerFields(work) });
      }
      return answerWithRequestId(response, id);
    };
    // Sampling is decided before anything else: a request whose trace is left out runs exactly
    // as with tracing off (no span, no context; its calls carry flag 00 on their own).
    const opened = tracing
      ? openIncomingSpan(request.headers, () => ({ name: `${method} ${route}`, attributes: { "http.request.method": method, "http.route": route } }), SpanKind.SERVER)
      : undefined;
    if (!opened) {
      const result = withRequestContext(work, () => fetch(request));
      return result instanceof Promise ? result.then(answer) : answer(result as Response);
    }
    const { span } = opened;
    const settle = (response: Response) => {
      span.setAttribute("http.response.status_code", response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      return answer(response);
    };
    const fail = (error: unknown) => {
      span.end();
      throw error;
    };
    // The kept span stays current for everything the request starts, so its calls join the trace.
    return context.with(opened.context, () => {
      span.setAttribute("request.id", id);
      try {
        const result = withRequestContext(work, () => fetch(request));
        return result instanceof Promise ? result.then(settle, fail) : settle(result as Response);
      } catch (error) {
        fail(error);
      }
    });
  };
  // Elysia calls the wrapper with its (unchanging) fetch on each request and calls what it
  // returns: the observed fetch is made once, not per request.
  let inner: unknown;
  let outer: (request: Request) => unknown;
  app.wrap(((fetch: (request: Request) => unknown) => (fetch === inner ? outer : ((inner = fetch), (outer = observed(fetch))))) as never);
}
