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

function result(h: Harness, scenario: string, jobs: number): ScenarioResult {
  return { backend: h.backend, scenario, jobs, lost: 0, duplicated: 0, runsTwice: 0, stuck: 0, recoveryMs: [], notes: [], problems: [], findings: [] };
}

/** Kills a worker with -9 only while a handler runs in it, and proves it afterwards from the effects table. */
async function killMidJob(h: Harness, victimIndex: number, out: ScenarioResult): Promise<void> {
  const victim = h.workers[victimIndex]!;
  await victim.waitRunning();
  const pid = victim.pid!;
  // Aim: wait for a "started" row of this process with no "finished" yet (a worker between two jobs, or
  // starved by the other one for a moment, is not what this scenario kills).
  const deadline = Date.now() + 10_000;
  while ((await h.inFlight(pid)).length === 0 && Date.now() < deadline) await sleep(2);
  const at = Date.now();
  victim.kill9();
  // The kill closed its connections: whatever it had not committed is rolled back; what it had is visible.
  await sleep(300);
  const running = await h.inFlight(pid);
  out.notes.push(`${victim.name} killed with ${running.length} handler(s) running`);
  if (running.length === 0) out.problems.push(`the kill of ${victim.name} (pid ${pid}) landed while no handler was running in it`);
  await sleep(random(0, 300));
  victim.start();
  // Recovery: until every job that was running in the killed process has committed its effect elsewhere
  // (its lease expired, or the broker requeued it when the connection dropped).
  out.recoveryMs.push(await h.doneAfter(running, at));
}

export async function workerKills(h: Harness, jobs: number, kills: number): Promise<ScenarioResult> {
  const out = result(h, "kill -9 worker mid-job", jobs);
  const r = h.range(jobs);
  await h.enqueue(r);
  const t0 = Date.now();
  for (let k = 0; k < kills; k++) {
    await h.waitFinished(r, ((k + 1) / (kills + 2)) * jobs, t0);
    await killMidJob(h, k % 2, out);
  }
  Object.assign(out, merge(out, await h.settle(r, t0)));
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
  await h.enqueue(r);
  const t0 = Date.now();
  await h.waitFinished(r, jobs / 2, t0);
  const before = await h.settleRunsTwice(r);
  await killMidJob(h, 1, out);
  const lease = out.recoveryMs.at(-1)!;
  if (lease > (VISIBILITY_TIMEOUT_S + 4) * 1000) out.problems.push(`the skewed worker's jobs came back after ${(lease / 1000).toFixed(1)} s, not within the ${VISIBILITY_TIMEOUT_S} s lease`);
  Object.assign(out, merge(out, await h.settle(r, t0)));
  if (before > 0) out.problems.push(`${before} jobs ran twice while every worker was alive (a lease taken by the skewed clock)`);
  // Wait for two ticks past the scenario, then read the ticks it saw.
  await sleep(2 * TICK_EVERY_S * 1000);
  const ticks = await h.query<{ scheduled_for: Date; at: Date; pid: number }>(`SELECT scheduled_for, at, pid FROM ${h.schema}.chaos_ticks WHERE at >= $1`, [since]);
  const early = ticks.filter((t) => t.at.getTime() < t.scheduled_for.getTime() - 1000);
  const seen = new Map<number, number>();
  for (const t of ticks) seen.set(t.scheduled_for.getTime(), (seen.get(t.scheduled_for.getTime()) ?? 0) + 1);
  const twice = [...seen.values()].filter((c) => c > 1).length;
  out.notes.push(`${ticks.length} ticks of a ${TICK_EVERY_S} s schedule ran, ${early.length} more than 1 s before their time by the database's clock, ${twice} twice`);
  // Reported, not failed: the scheduler reads the process's clock today (what is left of issue 24).
  if (early.length > 0) out.findings.push(`${early.length} of ${ticks.length} scheduled ticks ran early, by up to ${(Math.max(...early.map((t) => t.scheduled_for.getTime() - t.at.getTime())) / 1000).toFixed(1)} s: the scheduler reads the process's clock`);
  if (twice > 0) out.problems.push(`${twice} scheduled ticks ran twice`);
  // B back on the real clock for the scenarios after this one.
  await b.stop();
  b.nodeArgs = [];
  delete b.env.CHAOS_CLOCK_SHIFT_MS;
  b.start();
  await b.waitRunning();
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
  const running = await h.inFlight(pid);
  const at = Date.now();
  // Timed from the fault's start, concurrently with it: work in flight may finish during a black hole.
  const recovered = h.doneAfter(running, at);
  if (fault === "latency") {
    proxy.setLatency(50);
    await h.waitFinished(r, (jobs * 3) / 4, t0);
    proxy.setLatency(0);
    out.notes.push(`${proxy.connections} connections of worker A delayed`);
  } else if (fault === "cut") {
    const { midStatement, cut } = await proxy.dropMidStatement();
    out.notes.push(`${cut} connections of worker A reset, ${midStatement} with a statement on the wire`);
    if (midStatement === 0) out.problems.push("no connection had a statement on the wire when the connections were cut");
  } else if (fault === "blackhole") {
    out.notes.push(`${proxy.connections} connections of worker A held, ${running.length} handler(s) running in it`);
    await proxy.blackHole((VISIBILITY_TIMEOUT_S + 3) * 1000);
  } else {
    out.notes.push(`${proxy.halfClose()} connections of worker A half-closed`);
  }
  out.recoveryMs.push(fault === "latency" ? ((await h.resumedAfter(r, Date.now())) ?? 0) : await recovered);
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

function merge(out: ScenarioResult, counted: Pick<ScenarioResult, "lost" | "duplicated" | "runsTwice" | "stuck" | "problems">): ScenarioResult {
  return { ...out, lost: counted.lost, duplicated: counted.duplicated, runsTwice: counted.runsTwice, stuck: counted.stuck, problems: [...out.problems, ...counted.problems] };
}
