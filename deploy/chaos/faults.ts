// The faults of a chaos run, one at a time every few seconds: SIGKILL a random service or the
// gateway and start it again (in shuffled rounds, so each is hit before any is hit twice); once
// each, restart Postgres and restart Redis with nothing kept. A process that died without being
// killed is reported and started again so the run can finish.
import { SERVICE_ENTRIES, type ProcessName, type Stack } from "../local/stack.ts";
import type { PrivatePostgres, PrivateRedis } from "../local/private-servers.ts";

// The model simulator stands for an outside provider: it is never a target.
const TARGETS: ProcessName[] = [...(Object.keys(SERVICE_ENTRIES) as ProcessName[]), "gateway"];

/** Faults until each has happened once: every target killed, Postgres and Redis restarted. */
export const FAULTS_PER_ROUND = TARGETS.length + 2;

// Postgres and Redis stay down a moment, as a restart under load does, so calls meet the outage.
const OUTAGE_MS = 3000;

async function outage(server: PrivatePostgres | PrivateRedis): Promise<void> {
  await server.stop();
  await Bun.sleep(OUTAGE_MS);
  await server.start();
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

export interface FaultRecord {
  kills: Map<ProcessName, number>;
  postgresRestarted: boolean;
  redisRestarted: boolean;
  /** Processes that exited without being killed, as "name (exit code or signal)". */
  selfExits: string[];
  /** Restarts that did not come up ready. */
  failedRestarts: string[];
}

export interface FaultPlan {
  stack: Stack;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  everyMs: number;
  /** Share of the articles created so far, 0 to 1: Postgres restarts at a third, Redis at two thirds. */
  progress(): number;
  say(line: string): void;
}

export interface Faults {
  record: FaultRecord;
  /** Whether every target has been killed once and Postgres and Redis have had their restart. */
  everyFaultDone(): boolean;
  /** Stops after the fault under way, so nothing is left down by a fault. */
  stop(): Promise<FaultRecord>;
  /** Records and starts again every process that died without being killed. */
  restartTheDead(): Promise<void>;
}

export function startFaults(plan: FaultPlan): Faults {
  const { stack, say } = plan;
  const record: FaultRecord = { kills: new Map(), postgresRestarted: false, redisRestarted: false, selfExits: [], failedRestarts: [] };
  const stopping = new AbortController();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopping.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });

  const timed = async (what: string, action: () => Promise<void>) => {
    const started = Date.now();
    try {
      await action();
      say(`${what}, back in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      record.failedRestarts.push(`${what}: ${(error as Error).message}`);
      say(`${what}, NOT back: ${(error as Error).message}`);
    }
  };

  const restartTheDead = async () => {
    for (const [name, child] of stack.processes) {
      // A death by signal (a crash, the OOM killer) leaves exitCode null and sets signalCode.
      const how = child.exitCode ?? child.signalCode;
      if (how === null) continue;
      record.selfExits.push(`${name} (${how})`);
      await timed(`${name} EXITED ON ITS OWN (${how}), started again`, () => stack.start(name));
    }
  };

  let round: ProcessName[] = [];
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      await pause(plan.everyMs);
      if (stopping.signal.aborted) break;
      await restartTheDead();
      if (!record.postgresRestarted && plan.progress() >= 1 / 3) {
        record.postgresRestarted = true;
        await timed(`Postgres stopped for ${OUTAGE_MS / 1000} s and started`, () => outage(plan.postgres));
      } else if (!record.redisRestarted && plan.progress() >= 2 / 3) {
        record.redisRestarted = true;
        await timed(`Redis stopped for ${OUTAGE_MS / 1000} s and started empty`, () => outage(plan.redis));
      } else {
        if (round.length === 0) round = shuffled(TARGETS);
        const name = round.pop()!;
        record.kills.set(name, (record.kills.get(name) ?? 0) + 1);
        await timed(`SIGKILL ${name}`, async () => {
          await stack.kill(name, "SIGKILL");
          await stack.start(name);
        });
      }
    }
  })();

  return {
    record,
    everyFaultDone: () => record.postgresRestarted && record.redisRestarted && TARGETS.every((t) => record.kills.has(t)),
    async stop() {
      stopping.abort();
      await loop;
      return record;
    },
    restartTheDead,
  };
}
