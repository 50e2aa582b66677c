// The article as /v1 presents it, as the articles.api.v1 message: the answer of ArticleService's
// calls and of PublishingService's PublishArticle alike, so both services read it from here.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ArticleSchema, type Article as ApiArticle } from "../../../proto/gen/articles/api/v1/articles_pb.ts";
import type { Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { presentArticle } from "../../../services/kit/src/public-article.ts";

export function apiArticle(article: Article, project: Pick<Project, "id" | "name">): ApiArticle {
  return fromJson(ArticleSchema, presentArticle(article, project) as unknown as JsonValue, { ignoreUnknownFields: true });
}
