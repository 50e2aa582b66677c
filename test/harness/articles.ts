// Creating articles through the public API, as every whole-stack test area does.
import type { ApiClient } from "./http.ts";

/** A complete, valid creation body; override any field. */
export function articleBody(projectId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    project_id: projectId,
    title: "How to brew pour-over coffee",
    article_type: "blog_post",
    target_word_count: 1000,
    tone: "friendly",
    point_of_view: "second_person",
    language: "en",
    ...overrides,
  };
}

/** POST /v1/articles, failing unless it answers 201; the created article. */
export async function createArticle(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const res = await api.post("/v1/articles", body);
  if (res.status !== 201) throw new Error(`POST /v1/articles answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
