// @article-generation/client: the operations and types generated from the API's OpenAPI document
// (./generated, never edited by hand), the API's errors as classes, and a client that raises them.
import { createClient, createConfig, type Client } from "./generated/client/index.js";
import { apiErrorOf } from "./errors.js";

export * from "./generated/index.js";
export { createClient, createConfig, type Client, type Config, type RequestResult, type ServerSentEventsResult } from "./generated/client/index.js";
export { ApiError, GateRefused, RateLimited, ValidationFailed, apiErrorOf, type GateCode } from "./errors.js";
export { articlePages, listedArticles, type ArticleListFilter, type ArticleListPage } from "./pager.js";

export interface ArticleClientOptions {
  /** Where the gateway answers, e.g. "https://api.example.com" (no trailing /v1). */
  baseUrl: string;
  /** The API key sent as its bearer token, or a function that returns it. */
  apiKey: string | (() => string | Promise<string>);
  /** Another fetch (a test double, a proxying fetch); the global fetch otherwise. */
  fetch?: typeof fetch;
}

/**
 * A client whose error answers are ApiError, ValidationFailed, GateRefused or RateLimited: thrown
 * with `throwOnError: true`, else returned as `error`. Pass it as `client` to each operation.
 */
export function createArticleClient(options: ArticleClientOptions): Client {
  const client = createClient(createConfig({ baseUrl: options.baseUrl, auth: options.apiKey, fetch: options.fetch }));
  // A network failure has no answer and stays the fetch error it was.
  client.interceptors.error.use((error, response) => (response ? apiErrorOf(response, error) : error));
  return client;
}
