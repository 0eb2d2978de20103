/**
 * Flows under kill -9: flows of a root, WIDTH steps after it side by side and a join after all of them, started one
 * by one while both workers run them, and a worker killed mid-step `kills` times (as workerKills kills). Every step
 * is a chaos.step: its effect guarded by the inbox, its "started" row tagged with its attempt, its n as its result.
 *
 * Counted after the batch settles: steps whose effect never committed (lost), effects committed twice, steps started
 * twice (a kill's retry, allowed), a step claimed twice for one attempt or started before a step it runs after had
 * committed (a fan-in made ready twice or too early), results passed on wrong, and flows not completed (stuck).
 */
import { Job, type FlowStepInput } from "@jfast/runtime";
import { sleep } from "../lib/subject.js";
import { random, type Harness, type ScenarioResult } from "./harness.js";
import { KILL_HANDLER_MS, killMidJob, merge, result } from "./scenarios.js";

const WIDTH = 10;
const SIZE = WIDTH + 2;
export const FLOWS_SCENARIO = `kill -9 worker mid-flow (1 → ${WIDTH} → 1)`;

export async function flowKills(h: Harness, jobs: number, kills: number): Promise<ScenarioResult> {
  const flows = Math.max(10, Math.round(jobs / SIZE));
  const out = result(h, FLOWS_SCENARIO, flows * SIZE);
  const r = h.range(flows * SIZE);
  const ids: string[] = [];
  const t0 = Date.now();
  // Spread over about the time the batch takes on two workers of 8, so kills find roots, parallel steps and joins.
  const spreadMs = (flows * SIZE * KILL_HANDLER_MS) / 16;
  const producer = (async () => {
    for (let f = 0; f < flows; f++) {
      const base = r.from + f * SIZE;
      const step = (n: number, parents?: Record<string, number>) => new Job({ task: "chaos.step", payload: { n, ms: KILL_HANDLER_MS, ...(parents ? { parents } : {}) } });
      const parallel = Array.from({ length: WIDTH }, (_, i) => `p${i}`);
      const steps: Record<string, FlowStepInput> = { root: step(base) };
      parallel.forEach((name, i) => (steps[name] = { job: step(base + 1 + i, { root: base }), after: ["root"] }));
      steps.join = { job: step(base + SIZE - 1, Object.fromEntries(parallel.map((name, i) => [name, base + 1 + i]))), after: parallel };
      ids.push((await h.queue.flow({ name: "chaos", steps })).flowId);
      await sleep(random(0, (2 * spreadMs) / flows));
    }
  })();
  const total = flows * SIZE;
  const drained = async () => (await h.finished(r)) >= total;
  const recoveries: Array<Promise<void>> = [];
  for (let k = 0; k < kills; k++) {
    await h.waitFinished(r, ((k + 1) / (kills + 2)) * total, t0);
    recoveries.push((await killMidJob(h, k % 2, out, drained)).recovery);
  }
  await producer;
  await Promise.all(recoveries);
  Object.assign(out, merge(out, await h.settle(r, t0)));

  // Each flow as the backend sees it once everything settled: any not completed is stuck.
  const notCompleted: string[] = [];
  for (const id of ids) {
    const flow = await h.queue.backend.getFlow({ id });
    if (flow?.state === "completed") continue;
    const states = flow ? Object.entries(flow.steps).filter(([, s]) => s.state !== "completed").map(([name, s]) => `${name} ${s.state}`) : ["not found"];
    notCompleted.push(`${id} (${flow?.state ?? "missing"}: ${states.slice(0, 4).join(", ")})`);
  }
  out.stuck = notCompleted.length;
  if (notCompleted.length > 0) out.problems.push(`${notCompleted.length} of ${flows} flows not completed after the batch settled: ${notCompleted.slice(0, 3).join("; ")}`);

  const role = `CASE WHEN (s.n - $1) % ${SIZE} = 0 THEN 'root' WHEN (s.n - $1) % ${SIZE} = ${SIZE - 1} THEN 'join' ELSE 'parallel' END`;
  // Two starts of one step for the same attempt: it was claimed twice, not retried after a kill.
  const [twice] = await h.query<{ c: number }>(
    `SELECT count(*)::int AS c FROM (SELECT n FROM ${h.schema}.chaos_effects WHERE phase = 'started' AND n >= $1 AND n < $2 GROUP BY n, attempt HAVING count(*) > 1) t`,
    [r.from, r.to],
  );
  if (twice!.c > 0) out.problems.push(`${twice!.c} steps claimed twice for one attempt`);
  // A step started before every step it runs after had committed its effect: a fan-in that let it go too early.
  const [early] = await h.query<{ c: number }>(
    `SELECT count(DISTINCT s.n)::int AS c FROM ${h.schema}.chaos_effects s
      WHERE s.phase = 'started' AND s.n >= $1 AND s.n < $2 AND (s.n - $1) % ${SIZE} <> 0
        AND EXISTS (SELECT 1 FROM generate_series(CASE WHEN (s.n - $1) % ${SIZE} = ${SIZE - 1} THEN s.n - ${WIDTH} ELSE s.n - (s.n - $1) % ${SIZE} END,
                                                   CASE WHEN (s.n - $1) % ${SIZE} = ${SIZE - 1} THEN s.n - 1 ELSE s.n - (s.n - $1) % ${SIZE} END) p
                     WHERE NOT EXISTS (SELECT 1 FROM ${h.schema}.chaos_effects f WHERE f.phase = 'finished' AND f.n = p AND f.at <= s.at))`,
    [r.from, r.to],
  );
  if (early!.c > 0) out.problems.push(`${early!.c} steps started before a step they run after had committed`);
  const [bad] = await h.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${h.schema}.chaos_effects WHERE phase = 'bad-results' AND n >= $1 AND n < $2`, [r.from, r.to]);
  if (bad!.c > 0) out.problems.push(`${bad!.c} steps read a wrong or missing result of a step they run after`);
  // The attempts the kills cut short, by the kind of step they were running.
  const cut = await h.query<{ role: string; c: number }>(
    `SELECT ${role} AS role, count(*)::int AS c FROM ${h.schema}.chaos_effects s
      WHERE s.phase = 'started' AND s.n >= $1 AND s.n < $2
        AND NOT EXISTS (SELECT 1 FROM ${h.schema}.chaos_effects f WHERE f.phase = 'finished' AND f.run = s.run) GROUP BY 1 ORDER BY 1`,
    [r.from, r.to],
  );
  out.notes.push(
    `${flows} flows of ${SIZE} steps; ${flows - notCompleted.length} completed; attempts cut short by the kills: ${cut.map((x) => `${x.c} ${x.role}`).join(", ") || "none"}; ` +
      `${twice!.c} claimed twice for one attempt, ${early!.c} started early, ${bad!.c} wrong results`,
  );
  return out;
}
