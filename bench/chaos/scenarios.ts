/**
 * The faults, one function per scenario. Each runs a fresh batch of jobs (its own range of `n`) on the
 * backend's running workers, makes its fault while the batch drains, and returns what it counted.
 */
import { Job } from "@jfast/runtime";
import { sleep } from "../lib/subject.js";
import { random, type Harness, type ScenarioResult } from "./harness.js";
import { TICK_EVERY_S, VISIBILITY_TIMEOUT_S } from "./service.js";

const CLOCK_PRELOAD = new URL("./clock-ahead.mjs", import.meta.url).href;
export const CLOCK_SHIFT_MS = 30_000;
/** Handlers of the batches a worker is killed in take about this long: the batch lasts, a kill lands mid-job. */
export const KILL_HANDLER_MS = 80;

export function result(h: Harness, scenario: string, jobs: number): ScenarioResult {
  return { backend: h.backend, scenario, jobs, lost: 0, duplicated: 0, runsTwice: 0, stuck: 0, recoveryMs: [], notes: [], problems: [], findings: [] };
}

/**
 * Kills a worker with -9 only while a handler runs in it, and proves it afterwards from the effects table.
 * The preferred victim, else the other worker when the preferred one has nothing in hand (a worker may hold
 * the whole rest of a batch in its prefetch buffer while the other idles).
 */
export async function killMidJob(h: Harness, preferred: number, out: ScenarioResult, drained: () => Promise<boolean>, onlyPreferred = false): Promise<{ recovery: Promise<void> }> {
  // A kill that lands in the few ms between a handler's check and its commit finds nothing running: it is
  // noted and made again (the victim restarted first); three such misses in a row fail the run.
  for (let attempt = 1; ; attempt++) {
    // A preferred victim still restarting after an earlier kill is not waited for while the other one works:
    // the batch drains meanwhile, and a kill must land before it has.
    const first = !onlyPreferred && !h.workers[preferred]!.running && h.workers[1 - preferred]!.running ? 1 - preferred : preferred;
    await h.workers[first]!.waitRunning();
    // The other worker is a candidate only while it claims (not while it restarts after an earlier kill).
    const candidates = onlyPreferred || !h.workers[1 - first]!.running ? [first] : [first, 1 - first];
    let victim = h.workers[first]!;
    const deadline = Date.now() + 10_000;
    search: while (Date.now() < deadline && !(await drained())) {
      for (const i of candidates) {
        const w = h.workers[i]!;
        if (w.pid !== null && (await h.inFlight(w.pid)).length > 0) {
          victim = w;
          break search;
        }
      }
      await sleep(2);
    }
    const pid = victim.pid!;
    const before = process.env.CHAOS_DEBUG ? await h.inFlight(pid) : [];
    const at = Date.now();
    victim.kill9();
    // The kill closed its connections: whatever it had not committed is rolled back; what it had is visible.
    await sleep(300);
    const running = await h.inFlight(pid);
    if (process.env.CHAOS_DEBUG) console.log(`chaos: kill of ${victim.name} pid ${pid}: in flight before ${JSON.stringify(before)}, after ${JSON.stringify(running)}`);
    await sleep(random(0, 300));
    victim.start();
    if (running.length === 0 && (await drained())) {
      out.problems.push(`the batch had drained before the kill of ${victim.name} could land mid-job: raise CHAOS_JOBS`);
      return { recovery: Promise.resolve() };
    }
    if (running.length === 0) {
      out.notes.push(`a kill of ${victim.name} found no handler running (made again)`);
      if (attempt < 3) continue;
      out.problems.push(`three kills of ${victim.name} in a row landed while no handler was running in it`);
      return { recovery: Promise.resolve() };
    }
    out.notes.push(`${victim.name} killed with ${running.length} handler(s) running`);
    // Recovery, timed in the background while the batch goes on (the next kill must land in it too): until
    // every job that was running in the killed process has committed its effect elsewhere (its lease expired,
    // or the broker requeued it when the connection dropped).
    return { recovery: h.doneAfter(running, at).then((ms) => void out.recoveryMs.push(ms)) };
  }
}

export async function workerKills(h: Harness, jobs: number, kills: number): Promise<ScenarioResult> {
  const out = result(h, "kill -9 worker mid-job", jobs);
  const r = h.range(jobs);
  await h.enqueue(r, KILL_HANDLER_MS);
  const t0 = Date.now();
  const drained = async () => (await h.finished(r)) >= jobs;
  const recoveries: Array<Promise<void>> = [];
  for (let k = 0; k < kills; k++) {
    await h.waitFinished(r, ((k + 1) / (kills + 2)) * jobs, t0);
    recoveries.push((await killMidJob(h, k % 2, out, drained)).recovery);
  }
  await Promise.all(recoveries);
  Object.assign(out, merge(out, await h.settle(r, t0)));
  return out;
}

/** How long the blocked-loop scenario's handlers keep the event loop busy: three leases. */
export const BLOCK_MS = 3 * VISIBILITY_TIMEOUT_S * 1000;
export const BLOCKED_SCENARIO = `event loop blocked for 3× the lease (${BLOCK_MS / 1000} s)`;

/**
 * `blocked` jobs spread through the batch keep their worker's event loop busy for three leases (each stalls its
 * whole process: a few, not hundreds) while the rest drains on both workers. Both live, so nothing may run twice
 * and no job may die: every job has the default 3 attempts, not the matrix's 25, so lost leases would show as
 * dead letters (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease).
 */
export async function blockedLoop(h: Harness, jobs: number, blocked: number): Promise<ScenarioResult> {
  const out = result(h, BLOCKED_SCENARIO, jobs);
  const r = h.range(jobs);
  const ns = new Set(Array.from({ length: blocked }, (_, k) => r.from + Math.floor(((k + 1) * jobs) / (blocked + 1))));
  const pids = new Map(h.workers.map((w) => [w.pid, w.name]));
  const warned = h.workers.map((w) => w.warningCount);
  // Handlers of KILL_HANDLER_MS: the batch still drains on the other worker while one is blocked.
  const ids = await h.enqueue(r, KILL_HANDLER_MS, { block: { ns, ms: BLOCK_MS }, maxAttempts: 3 });
  const t0 = Date.now();
  Object.assign(out, merge(out, await h.settle(r, t0)));
  if (out.runsTwice > 0) out.problems.push(`${out.runsTwice} jobs ran twice while both workers were alive (a lease taken from a blocked worker)`);
  const dead = (await h.queue.backend.listDead({ limit: 1000 })).filter((d) => {
    const n = (d.job.payload as { n?: unknown } | null)?.n;
    return typeof n === "number" && n >= r.from && n < r.to;
  });
  if (dead.length > 0) out.problems.push(`${dead.length} jobs of the batch dead-lettered: ${JSON.stringify(dead.slice(0, 3).map((d) => d.lastError))}`);
  // Each blocked handler, as its rows show it: which worker, and how long from its start to its effect.
  const runs = await h.query<{ n: number; pid: number; ms: number; from: number }>(
    `SELECT s.n, s.pid, (extract(epoch FROM f.at - s.at) * 1000)::int AS ms, (extract(epoch FROM s.at) * 1000)::float8 AS from
       FROM ${h.schema}.chaos_effects s JOIN ${h.schema}.chaos_effects f ON f.run = s.run AND f.phase = 'finished'
      WHERE s.phase = 'started' AND s.n = ANY($1) ORDER BY s.n`,
    [[...ns]],
  );
  const short = runs.filter((x) => x.ms < BLOCK_MS);
  // Blocks of both workers at once leave a two-core machine no CPU for anything else (their heartbeat threads too).
  const overlapping = runs.filter((x) => runs.some((y) => y.pid !== x.pid && y.from < x.from + x.ms && x.from < y.from + y.ms)).length;
  const started = runs.length > 0 ? Math.min(...runs.map((x) => x.from)) : 0;
  if (runs.length < ns.size) out.problems.push(`${ns.size - runs.length} blocked jobs have no run from start to effect`);
  if (short.length > 0) out.problems.push(`blocked jobs finished in under ${BLOCK_MS} ms (the block did not happen): ${short.map((x) => `n=${x.n} ${x.ms} ms`).join(", ")}`);
  // An attempt lost on the way (a lease taken and given back) shows in the job's errors where the backend keeps them.
  let lostAttempts = 0;
  let read = 0;
  for (const id of ids) {
    // RabbitMQ keeps no finished job to look up (NOT_SUPPORTED): its lost attempts show as runs twice instead.
    const info = await h.queue.backend.getJob({ id }).catch((error: { code?: string }) => {
      if (error.code === "NOT_SUPPORTED") return null;
      throw error;
    });
    if (!info) continue;
    read++;
    lostAttempts += info.job.errors.length;
    if (info.job.errors.length > 0 || info.state !== "completed") {
      const n = (info.job.payload as { n: number }).n;
      const block = runs.find((x) => x.n === n);
      const when = block ? `, its block ran ${new Date(block.from).toISOString()} + ${(block.ms / 1000).toFixed(1)} s` : "";
      out.problems.push(`blocked job ${id} (n=${n}) is ${info.state} after ${info.job.attempts} attempt(s) with errors ${JSON.stringify(info.job.errors)}${when}`);
    }
  }
  // The worker says when its heartbeat thread kept the leases; any other word from the thread is a failure of it.
  const warnings = h.workers.map((w, i) => w.warningsSince(warned[i]!));
  const kept = warnings.map((ws) => ws.filter((m) => m.startsWith("the event loop was blocked")).length);
  const failures = [...new Set(warnings.flat().filter((m) => /heartbeat/.test(m) && !m.startsWith("the event loop was blocked")))];
  if (failures.length > 0) out.problems.push(`the workers logged: ${failures.join("; ")}`);
  out.notes.push(
    `${ns.size} handlers blocked the event loop for ${BLOCK_MS / 1000} s: ${runs.map((x) => `n=${x.n} in ${pids.get(x.pid) ?? `pid ${x.pid}`} at +${((x.from - started) / 1000).toFixed(1)} s for ${(x.ms / 1000).toFixed(1)} s`).join(", ")} ` +
      `(${overlapping} of them while the other worker was blocked too); ` +
      `${dead.length} dead letters of the batch` +
      (read > 0 ? `; ${lostAttempts} errors on the ${read} blocked jobs' records` : "; the backend keeps no finished job to read its errors"),
  );
  out.notes.push(`"the event loop was blocked; the heartbeat thread kept the leases" logged ${h.workers.map((w, i) => `${kept[i]} time(s) by ${w.name}`).join(", ")}`);
  return out;
}

export interface BrokerKill {
  scenario: string;
  detail: string;
  prepare?: () => Promise<void>;
  kill: () => Promise<void>;
  /** `appendfsync everysec`: acknowledged jobs it loses are that setting's documented window, stated, not failed. */
  lossAllowed?: boolean;
}

/**
 * The engine killed while half the batch is still being enqueued by a producer (one job per call, as a
 * request handler would), so writes are in flight when it dies. Lost counts acknowledged enqueues only; an
 * enqueue that failed (the engine was down) is the caller's to retry and is not expected.
 */
export async function brokerKill(h: Harness, jobs: number, kill: BrokerKill): Promise<ScenarioResult> {
  const out = result(h, kill.scenario, jobs);
  await kill.prepare?.();
  const r = h.range(jobs);
  const head = { from: r.from, to: r.from + Math.floor(jobs / 2) };
  await h.enqueue(head);
  const acknowledged = new Set<number>(Array.from({ length: head.to - head.from }, (_, i) => head.from + i));
  let failed = 0;
  let producing = true;
  const producer = (async () => {
    for (let n = head.to; n < r.to; n++) {
      try {
        await h.queue.enqueue(new Job({ task: "chaos.effect", payload: { n } }));
        acknowledged.add(n);
      } catch {
        failed++;
      }
      await sleep(random(0, 8));
    }
    producing = false;
  })();
  const t0 = Date.now();
  await h.waitFinished(r, jobs / 4, t0);
  const at = Date.now();
  const sentBefore = acknowledged.size;
  await kill.kill();
  const upAt = Date.now();
  out.recoveryMs.push((await h.resumedAfter(r, upAt)) ?? 0);
  await producer;
  const counted = await h.settle(r, t0, acknowledged);
  Object.assign(out, merge(out, counted));
  out.notes.push(`${kill.detail}; down ${((upAt - at) / 1000).toFixed(1)} s; ${sentBefore - (head.to - head.from)} enqueued one by one before the kill, ${failed} enqueue calls refused while it was down${producing ? "" : ""}`);
  if (kill.lossAllowed) {
    out.notes.push(`acknowledged but lost: ${counted.lost}`);
    const lost = out.problems.filter((p) => p.includes("never recorded their effect"));
    out.problems = out.problems.filter((p) => !lost.includes(p));
    out.findings.push(...lost.map((p) => `appendfsync everysec: ${p}`));
  }
  return out;
}

/**
 * Worker B restarted with its wall clock 30 s ahead (a preload shifts Date), then killed mid-job once:
 * the jobs it held must come back within the lease as measured by the engine, not 30 s late; nothing may run
 * twice while B lives; the recurring task's ticks must not fire early by the database's clock.
 */
export async function clockAhead(h: Harness, jobs: number): Promise<ScenarioResult> {
  const out = result(h, "worker clock 30 s ahead", jobs);
  const b = h.workers[1]!;
  await b.stop();
  b.nodeArgs = ["--import", CLOCK_PRELOAD];
  b.env = { ...b.env, CHAOS_CLOCK_SHIFT_MS: String(CLOCK_SHIFT_MS) };
  b.start();
  await b.waitRunning();
  const since = new Date();
  const r = h.range(jobs);
  await h.enqueue(r, KILL_HANDLER_MS);
  const t0 = Date.now();
  // Late in the batch, so that the recovery measured is the return of B's jobs and not their wait behind the rest
  // of the batch: on RabbitMQ a lost attempt's record goes to the tail of the queue (docs/rabbitmq.md).
  await h.waitFinished(r, jobs * 0.8, t0);
  const before = await h.settleRunsTwice(r);
  await (await killMidJob(h, 1, out, async () => (await h.finished(r)) >= jobs, true)).recovery;
  const lease = out.recoveryMs.at(-1)!;
  if (lease > (VISIBILITY_TIMEOUT_S + 4) * 1000) out.problems.push(`the skewed worker's jobs came back after ${(lease / 1000).toFixed(1)} s, not within the ${VISIBILITY_TIMEOUT_S} s lease`);
  Object.assign(out, merge(out, await h.settle(r, t0)));
  if (before > 0) out.problems.push(`${before} jobs ran twice while every worker was alive (a lease taken by the skewed clock)`);
  // B back on the real clock for the scenarios after this one, after long enough ahead to see a few ticks due.
  while (Date.now() - since.getTime() < 12_000) await sleep(100);
  await b.stop();
  const stoppedAt = Date.now();
  b.nodeArgs = [];
  delete b.env.CHAOS_CLOCK_SHIFT_MS;
  b.start();
  await b.waitRunning();
  // The ticks due while B ran ahead, against the ticks that ran (read two ticks later).
  await sleep(2 * TICK_EVERY_S * 1000);
  const every = TICK_EVERY_S * 1000;
  const due: number[] = [];
  for (let t = Math.ceil(since.getTime() / every) * every + every; t <= stoppedAt - every; t += every) due.push(t);
  const ticks = await h.query<{ scheduled_for: Date; at: Date; attempt: number }>(
    `SELECT scheduled_for, at, attempt FROM ${h.schema}.chaos_ticks WHERE at >= $1 OR scheduled_for >= $1`,
    [since],
  );
  const early = ticks.filter((t) => t.at.getTime() < t.scheduled_for.getTime() - 1000);
  const runs = new Map<number, number>();
  for (const t of ticks) runs.set(t.scheduled_for.getTime(), (runs.get(t.scheduled_for.getTime()) ?? 0) + 1);
  // Twice: the same tick's job run twice at the same attempt, i.e. enqueued (claimed) twice. A later attempt of
  // it is the job's retry after its worker died mid-run, counted apart (at least once, as for every job).
  const firstRuns = new Map<string, number>();
  for (const t of ticks) firstRuns.set(`${t.scheduled_for.getTime()}:${t.attempt}`, (firstRuns.get(`${t.scheduled_for.getTime()}:${t.attempt}`) ?? 0) + 1);
  const twice = [...firstRuns.values()].filter((c) => c > 1).length;
  const retried = [...runs.values()].filter((c) => c > 1).length - twice;
  const skipped = due.filter((t) => !runs.has(t)).length;
  out.notes.push(
    `a ${TICK_EVERY_S} s schedule: ${due.length} ticks due while B ran ahead, ${skipped} of them never ran; ` +
      `${early.length} ticks ran more than 1 s before their time by the database's clock; ${twice} ran twice; ` +
      `${Math.max(0, retried)} ran again as a retry after their worker was stopped mid-run`,
  );
  // Stated, not failed: the scheduler reads the process's clock today (what is left of issue 24's clock part).
  if (early.length > 0) out.findings.push(`scheduled ticks ran early, by up to ${(Math.max(...early.map((t) => t.scheduled_for.getTime() - t.at.getTime())) / 1000).toFixed(0)} s`);
  if (skipped > 0) out.findings.push(`${skipped} of ${due.length} ticks due meanwhile never ran (the skewed process claimed ticks ahead of them)`);
  if (twice > 0) out.problems.push(`${twice} scheduled ticks ran twice`);
  return out;
}

export type NetworkFault = "latency" | "cut" | "blackhole" | "halfclose";

export const NETWORK_SCENARIO: Record<NetworkFault, string> = {
  latency: "network: +50 ms each way",
  cut: "network: connections cut mid-statement",
  blackhole: `network: black hole ${VISIBILITY_TIMEOUT_S + 3} s (lease ${VISIBILITY_TIMEOUT_S} s)`,
  halfclose: "network: half-close",
};

/** Worker A's proxy to the engine misbehaves while the batch drains; worker B's path stays clean. */
export async function network(h: Harness, jobs: number, fault: NetworkFault): Promise<ScenarioResult> {
  const out = result(h, NETWORK_SCENARIO[fault], jobs);
  const proxy = h.proxies[0]!;
  const a = h.workers[0]!;
  await a.waitRunning();
  const crashesBefore = a.crashes.length;
  const r = h.range(jobs);
  await h.enqueue(r);
  const t0 = Date.now();
  await h.waitFinished(r, jobs / 4, t0);
  const pid = a.pid!;
  const at = Date.now();
  // What worker A has in hand once the fault has begun, and how soon all of it is committed (by A or by B).
  const inHand = async () => {
    await sleep(200);
    const running = await h.inFlight(pid);
    return { running, recovered: h.doneAfter(running, at) };
  };
  let measured: { running: number[]; recovered: Promise<number> } | null = null;
  if (fault === "latency") {
    proxy.setLatency(50);
    await h.waitFinished(r, (jobs * 3) / 4, t0);
    proxy.setLatency(0);
    out.notes.push(`${proxy.connections} connections of worker A delayed`);
  } else if (fault === "cut") {
    const { midStatement, cut } = await proxy.dropMidStatement();
    measured = await inHand();
    out.notes.push(`${cut} connections of worker A reset, ${midStatement} with a statement on the wire`);
    if (midStatement === 0) out.problems.push("no connection had a statement on the wire when the connections were cut");
  } else if (fault === "blackhole") {
    const connections = proxy.connections;
    const hole = proxy.blackHole((VISIBILITY_TIMEOUT_S + 3) * 1000);
    measured = await inHand();
    await hole;
    out.notes.push(`${connections} connections of worker A held, ${measured.running.length} handler(s) running in it 0.2 s in`);
  } else {
    out.notes.push(`${proxy.halfClose()} connections of worker A half-closed`);
    measured = await inHand();
  }
  out.recoveryMs.push(measured ? await measured.recovered : ((await h.resumedAfter(r, Date.now())) ?? 0));
  Object.assign(out, merge(out, await h.settle(r, t0)));
  // A worker may stop on a broken connection (then a supervisor starts it again) but not die silently mid-run.
  const exits = a.crashes.slice(crashesBefore);
  if (exits.length > 0) {
    out.notes.push(`worker A exited: ${exits[0]!.slice(0, 160)}`);
  }
  out.notes.push(a.alive ? "worker A kept running" : "worker A had stopped; started again");
  if (!a.alive) {
    a.start();
    await a.waitRunning();
  }
  return out;
}

export function merge(out: ScenarioResult, counted: Pick<ScenarioResult, "lost" | "duplicated" | "runsTwice" | "stuck" | "problems">): ScenarioResult {
  return { ...out, lost: counted.lost, duplicated: counted.duplicated, runsTwice: counted.runsTwice, stuck: counted.stuck, problems: [...out.problems, ...counted.problems] };
}
