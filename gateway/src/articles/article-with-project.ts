// An article as the public API hands it out: with its project, whose access decided the answer
// and whose name the presenters show. Its own module, so the operations and the modules they
// call on (versions, erasure, retry, presentation) share it without importing one another.
import type { Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";

export interface ArticleWithProject {
  article: Article;
  project: Project;
}
