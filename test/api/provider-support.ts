// What the tests of real providers share: a simulator instance played as a provider (its limits,
// bad days and counts through /_sim/provider) and the count of a project's articles in a status.
import { expect } from "bun:test";
import type { ProviderState } from "../../services/model-simulator/src/provider-limits.ts";
import type { RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import type { ApiClient } from "../harness/http.ts";

export const providerState = async (sim: RunningSimulator) => (await (await fetch(`${sim.url}/_sim/provider`)).json()) as ProviderState;

export const configureProvider = (sim: RunningSimulator, settings: Record<string, unknown>) =>
  fetch(`${sim.url}/_sim/provider`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(settings) }).then((r) => expect(r.status).toBe(200));

/** Sets the provider's counts back to zero (first_admitted_at is then the next call's). */
export const resetProviderCounts = (sim: RunningSimulator) => fetch(`${sim.url}/_sim/provider/counts`, { method: "DELETE" }).then((r) => expect(r.status).toBe(200));

/** How many of the project's articles are in a status (the list's total). */
export async function countIn(api: ApiClient, projectId: number, status: string): Promise<number> {
  const res = await api.get(`/v1/articles?project_id=${projectId}&status=${status}&per_page=1`);
  expect(res.status).toBe(200);
  return res.body.meta.total;
}

/** Creates `n` articles, `inFlight` requests at a time. */
export async function createArticles(api: ApiClient, n: number, body: Record<string, unknown>, inFlight = 1): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        next++;
        const res = await api.post("/v1/articles", body);
        expect(res.status).toBe(201);
        ids.push(res.body.data.external_id);
      }
    }),
  );
  return ids;
}
