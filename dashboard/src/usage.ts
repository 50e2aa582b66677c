// The month's words from the ledger (GET /v1/usage's report), a chart of the days, and the
// rate-limit windows.
import { api } from "./api.ts";
import { errorsOf, h, show, svg } from "./dom.ts";

interface Bucket {
  start: string;
  words: number;
  settled_words: number;
  reserved_words: number;
  cost: string;
  by_project: { project_id: number | null; words: number; cost: string }[];
  by_key: { key_id: number | null; words: number; cost: string }[];
}

function chart(days: Bucket[]): SVGElement {
  const width = 600;
  const height = 160;
  const max = Math.max(1, ...days.map((d) => d.words));
  const bar = days.length ? Math.min(40, (width - 20) / days.length) : 0;
  const bars = days.map((d, i) => {
    const barHeight = Math.round((d.words / max) * (height - 30));
    const x = 10 + i * bar;
    return svg("g", {}, svg("rect", { x, y: height - 20 - barHeight, width: Math.max(1, bar - 4), height: barHeight }, svg("title", {}, `${d.start.slice(0, 10)}: ${d.words} words`)), svg("text", { x, y: height - 5 }, d.start.slice(8, 10)));
  });
  return svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `Words per day this month, up to ${max}` }, ...bars);
}

const shares = (list: { words: number; cost: string }[], label: (s: any) => string) => list.map((s) => `${label(s)}: ${s.words} words, ${s.cost} USD`).join("; ");

function bucketTable(caption: string, buckets: Bucket[], time: (iso: string) => string) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, ...["When", "Words", "Settled", "Reserved", "Cost (USD)", "By project", "By key"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        ...buckets.map((b) =>
          h(
            "tr",
            {},
            h("td", {}, time(b.start)),
            h("td", {}, b.words),
            h("td", {}, b.settled_words),
            h("td", {}, b.reserved_words),
            h("td", {}, b.cost),
            h("td", {}, shares(b.by_project, (s) => (s.project_id ? `project ${s.project_id}` : "unattributed"))),
            h("td", {}, shares(b.by_key, (s) => (s.key_id ? `key ${s.key_id}` : "dashboard or workload"))),
          ),
        ),
      ),
    ),
  );
}

export async function usagePage(): Promise<void> {
  const answer = await api("GET", "/usage");
  if (answer.status !== 200) return show(h("h1", {}, "Usage"), h("p", { class: "error" }, errorsOf(answer.body)));
  const u = answer.body.data;
  const total = (label: string, value: number, id: string) => h("div", {}, h("span", {}, label), h("strong", { "data-testid": id }, value));
  show(
    h("h1", {}, `Usage for ${u.period}`),
    h("div", { class: "totals" }, total("Monthly allowance", u.monthly_words, "monthly-words"), total("Settled", u.settled_words, "settled-words"), total("Reserved", u.reserved_words, "reserved-words"), total("Remaining", u.remaining_words, "remaining-words")),
    h("h2", {}, "Words per day"),
    chart(u.days),
    bucketTable("Days of this month", u.days, (iso) => iso.slice(0, 10)),
    bucketTable("Hours of the last 48 hours", u.hours, (iso) => new Date(iso).toLocaleString()),
    h("h2", {}, "Rate limits"),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, ...["Endpoints", "Window", "Limit", "Used", "Remaining"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...u.rate_limits.flatMap((l: any) => l.windows.map((w: any) => h("tr", {}, h("td", {}, l.bucket), h("td", {}, `${w.window_seconds} s`), h("td", {}, w.limit), h("td", {}, w.used), h("td", {}, w.remaining))))),
      ),
    ),
  );
}
