# The docs' Python client (docs/grpc.md) as a team runs it: create an article over
# articles.api.v1 with an idempotency key, follow WatchArticle to its end, and print each event as
# one JSON line with what Python sees: the event's data_json read with json.loads, and the type
# of step_started's "step" in data (Struct) and in data_json.
# Usage: python3 watch_article.py <generated code dir> <host:port> <api key> <project id> <article type>
import json
import sys
import uuid

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
from articles.api.v1 import articles_pb2 as api, articles_pb2_grpc as rpc  # noqa: E402

_, _, target, key, project_id, article_type = sys.argv
stub = rpc.ArticleServiceStub(grpc.insecure_channel(target))
metadata = [("authorization", "Bearer " + key)]
created = stub.CreateArticle(api.CreateArticleRequest(
    article=api.ArticleInput(project_id=int(project_id), title="How to brew pour-over coffee", article_type=article_type,
                             target_word_count=150, tone="friendly", point_of_view="second_person", language="en"),
    idempotency_key=str(uuid.uuid4())), metadata=metadata)
for event in stub.WatchArticle(api.WatchArticleRequest(id=created.article.external_id, last_event_id="0-0"), metadata=metadata):
    line = {"article": created.article.external_id, "id": event.id, "event": event.event, "data": json.loads(event.data_json)}
    if event.event == "step_started":
        line["step_type_in_data"] = type(event.data["step"]).__name__
        line["step_type_in_data_json"] = type(line["data"]["step"]).__name__
    print(json.dumps(line), flush=True)
