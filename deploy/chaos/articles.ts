// Articles through the public API, as a client would create them while the system is under
// faults: each with an Idempotency-Key, retried until it is accepted or refused for good, so a
// reply lost to a killed gateway never makes a second article.

export interface GatewayReply {
  status: number;
  body: any;
}

/** One request to the gateway; a network failure (a killed gateway) is status 0. */
export async function callGateway(baseUrl: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<GatewayReply> {
  try {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { accept: "application/json", authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: text };
    }
  } catch (error) {
    return { status: 0, body: (error as Error).message };
  }
}

export const articleTitle = (n: number) => `Chaos article ${n}`;

export interface ArticleOrder {
  baseUrl: string;
  token: string;
  projectId: number;
  articleType: string;
  webhookUrl: string;
  runId: string;
}

export interface Creation {
  n: number;
  externalId?: string;
  /** Set when the gateway refused the article for good (a 4xx other than 409 and 429). */
  refusal?: string;
  /** Requests sent beyond the first (retries after a failure or no answer). */
  retries: number;
}

// Answers that say "try again": no answer at all, a conflict with the same key still in flight, a rate limit, a server error.
const retryable = (status: number) => status === 0 || status === 409 || status === 429 || status >= 500;

export async function createArticle(order: ArticleOrder, n: number, until: number): Promise<Creation> {
  const body = {
    project_id: order.projectId,
    title: articleTitle(n),
    article_type: order.articleType,
    target_word_count: 300,
    tone: "professional",
    point_of_view: "third_person",
    language: "en",
    webhook_url: order.webhookUrl,
  };
  const key = { "Idempotency-Key": `chaos-${order.runId}-${n}` };
  for (let retries = 0; ; retries++) {
    const reply = await callGateway(order.baseUrl, order.token, "POST", "/v1/articles", body, key);
    if (reply.status === 201) return { n, externalId: reply.body.data.external_id, retries };
    if (!retryable(reply.status) || Date.now() > until) return { n, refusal: `${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`, retries };
    await Bun.sleep(500);
  }
}
