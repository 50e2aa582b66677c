# What grpcio shows of a refusal: CreateArticle with a research domain that is not one, printed as
# JSON {code, details}. Usage: python3 refusal_message.py <generated code dir> <host:port> <api key> <project id> <domain>
import json
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
from articles.api.v1 import articles_pb2 as api, articles_pb2_grpc as rpc  # noqa: E402

_, _, target, key, project_id, domain = sys.argv
stub = rpc.ArticleServiceStub(grpc.insecure_channel(target))
try:
    stub.CreateArticle(api.CreateArticleRequest(article=api.ArticleInput(
        project_id=int(project_id), title="How to brew pour-over coffee", article_type="blog_post", target_word_count=1000,
        tone="friendly", point_of_view="second_person", language="en", research_include_domains=[domain])),
        metadata=[("authorization", "Bearer " + key)])
    print(json.dumps({"code": "OK"}))
except grpc.RpcError as error:
    print(json.dumps({"code": error.code().name, "details": error.details()}, ensure_ascii=False))
