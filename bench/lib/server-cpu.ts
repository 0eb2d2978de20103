/** A server's CPU time, read from /proc (Linux only), for the bench's per-side CPU measurements. */
import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/** USER_HZ is 100 on Linux: /proc/<pid>/stat counts CPU time in 10 ms ticks. */
const TICK_MS = 10;

/** A /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat line: the process's (or thread's) name and CPU ms so far. */
function parseStat(stat: string): { name: string; ms: number } {
  const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { name, ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
}

/** CPU ms used so far by every process named `comm` (PostgreSQL runs one per connection: all are added). */
export async function serverCpuMs(comm: string): Promise<number> {
  let total = 0;
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const { name, ms } = parseStat(await readFile(`/proc/${pid}/stat`, "utf8"));
      if (name === comm) total += ms;
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}

/** CPU ms used so far by one process (0 once it has ended). */
export async function processCpuMs(pid: number): Promise<number> {
  try {
    return parseStat(await readFile(`/proc/${pid}/stat`, "utf8")).ms;
  } catch {
    return 0;
  }
}

/** CPU ms the whole machine has spent busy (every core, /proc/stat: all but idle and iowait) and in all. */
export async function machineCpuMs(): Promise<{ busy: number; total: number }> {
  const line = (await readFile("/proc/stat", "utf8")).split("\n")[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) * TICK_MS, total: total * TICK_MS };
}

/**
 * CPU ms of each thread of this process so far, by thread id, with its name (Node 22 and later name theirs:
 * "MainThread", "V8Worker" for the garbage collector's and compiler's helpers, a worker thread by its `name`; Node 20
 * calls every one "node"). A thread that ended is no longer listed: the process's own total (process.cpuUsage) still
 * counts it.
 */
export function threadCpuMs(): Map<string, { name: string; ms: number }> {
  const threads = new Map<string, { name: string; ms: number }>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      threads.set(tid, parseStat(readFileSync(`/proc/self/task/${tid}/stat`, "utf8")));
    } catch {
      // The thread ended while we looked.
    }
  }
  return threads;
}

/** Each thread name's CPU ms between two readings of threadCpuMs; "ended threads" is what the process counted beyond them. */
export function threadCpuBetween(before: Map<string, { name: string; ms: number }>, after: Map<string, { name: string; ms: number }>, processMs: number): Array<[string, number]> {
  const byName = new Map<string, number>();
  let listed = 0;
  for (const [tid, { name, ms }] of after) {
    const spent = ms - (before.get(tid)?.ms ?? 0);
    listed += spent;
    byName.set(name, (byName.get(name) ?? 0) + spent);
  }
  const ended = processMs - listed;
  if (ended >= TICK_MS) byName.set("ended threads", ended);
  return [...byName].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
}
