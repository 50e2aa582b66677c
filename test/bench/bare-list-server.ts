// The baseline of a list page: a bare Bun.serve in a process of its own, as the gateway is, whose
// handler reads rows with postgres.js and answers them with JSON.stringify, and nothing else (no
// key, no access check, no presentation). GET /?query=articles|workflows&project_id=…&status=…
// reads that query's page of 20 from DATABASE_URL. Prints its port when listening.
import postgres from "postgres";

const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {} });

const pages = {
  articles: (projectId: number, status: string) =>
    sql`select * from article_store.articles where project_id = ${projectId} and status = ${status} order by created_at desc, id desc limit 20`,
  // The page of workflows by their type, each with its steps, as the catalog answers it.
  workflows: (projectId: number) =>
    sql`select w.*, (select json_agg(s order by s.step_number) from workflow_catalog.workflow_steps s where s.workflow_id = w.id) as steps
        from workflow_catalog.workflows w where w.project_id = ${projectId} order by w.slug collate "C" limit 20`,
};

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const query = new URL(request.url).searchParams;
    const rows = await pages[query.get("query") as keyof typeof pages](Number(query.get("project_id")), query.get("status") ?? "completed");
    return new Response(JSON.stringify({ success: true, data: rows }), { headers: { "content-type": "application/json; charset=utf-8" } });
  },
});
console.log(server.port);
