/** BENCHMARKS.md from the runs' JSON: one table per backend, jfast against its peers, medians with spread. */
import { readFileSync } from "node:fs";
import { median, withSpread } from "./stats.js";

export interface RunResult {
  subject: string;
  label: string;
  settings: string;
  enqueue: number;
  c1: number;
  c10: number;
  pickup: { p50: number; p99: number };
  /** Enqueued by another instance, for a subject whose pickup in its own process takes another path. */
  pickupElsewhere?: { p50: number; p99: number };
  pickupDead?: { p50: number; p99: number };
  rssMb: number;
  /** The separate-process run's two processes, whose peaks `rssMb` adds. */
  rssProducerMb?: number;
  rssWorkerMb?: number;
}

/** The AOF rows (a private Redis with an append-only file) are compared with each other only, the others likewise. */
const aof = (subject: string) => subject.endsWith("-aof");

const GROUPS: Array<{
  backend: string;
  /** The separate-process run: its own table, with the columns that run measures. */
  split?: boolean;
  jfast: string[];
  peers: string[];
  ceiling: "postgres" | "redis" | null;
  /** Which jfast row a peer's ratios are taken against: like with like. Default: every pair. */
  comparable?: (ours: string, peer: string) => boolean;
}> = [
  {
    backend: "PostgreSQL",
    jfast: ["jfast-postgres", "jfast-postgres@node20", "jfast-postgres-kept", "jfast-postgres-sync"],
    peers: ["graphile-worker", "pg-boss"],
    ceiling: "postgres",
  },
  {
    backend: "Redis",
    jfast: ["jfast-redis", "jfast-redis@node20", "jfast-redis-aof"],
    peers: ["bullmq", "bullmq-aof"],
    ceiling: "redis",
    comparable: (ours, peer) => aof(ours) === aof(peer),
  },
  { backend: "RabbitMQ", jfast: ["jfast-rabbitmq"], peers: ["amqplib", "amqplib-prefetch", "amqplib-priority"], ceiling: null },
  { backend: "PostgreSQL", split: true, jfast: ["jfast-postgres/split"], peers: ["graphile-worker/split", "pg-boss/split"], ceiling: null },
  { backend: "Redis", split: true, jfast: ["jfast-redis/split"], peers: ["bullmq/split"], ceiling: null },
  { backend: "RabbitMQ", split: true, jfast: ["jfast-rabbitmq/split"], peers: ["amqplib/split", "amqplib-prefetch/split"], ceiling: null },
];

/** The columns the separate-process run fills: every pickup there is of a job enqueued in another process. */
const SPLIT_COLUMNS = new Set(["enqueue jobs/s", "c=1 jobs/s", "c=10 jobs/s", "pickup p50 ms", "pickup p99 ms", "peak RSS MiB"]);

/** The targets, as ratios to a peer measured in the same run. */
const TARGETS: Record<string, string> = {
  "graphile-worker": "target: c=1, c=10 ≥ 1.5×, enqueue ≥ 2× (issue 40), pickup p50 enqueued elsewhere ≤ 2.0 ms",
  bullmq: "target: c=10 and enqueue ≥ 1.5×, pickup p50 enqueued elsewhere ≤ 1.0 ms",
  "bullmq-aof": "no target: both on a private Redis with appendonly yes, appendfsync everysec, to show what persistence costs each",
  amqplib: "target (before issue 40): enqueue ≥ 0.7× of raw amqplib with publisher confirms; issue 40 takes its targets against the prefetch 1 000 row",
  "amqplib-priority": "no target: the same raw client on a priority queue (x-max-priority 9, a priority on every message) as jfast's work queue is, to show what priorities cost the broker",
  "graphile-worker/split": "the targets are those of the single-process table; here every pickup is of a job enqueued in another process",
  "bullmq/split": "the targets are those of the single-process table; here every pickup is of a job enqueued in another process",
  "amqplib/split": "no target here: the raw client at prefetch = concurrency, as in the single-process table",
  "amqplib-prefetch/split": "target (issue 40): enqueue, c=1 and c=10 ≥ 0.8× of raw amqplib at prefetch 1 000 with confirms",
  "amqplib-prefetch": "target (issue 40): enqueue, c=1 and c=10 ≥ 0.8× of the same raw client with the broker pushing 1 000 ahead, as jfast's push-ahead lets it",
};

type Metric = (r: RunResult) => number | undefined;
/** `peer`: what a peer's figure is for that column, when it has no path of its own for it. */
const COLUMNS: Array<{ title: string; metric: Metric; peer?: Metric; digits: number; higherIsBetter: boolean }> = [
  { title: "enqueue jobs/s", metric: (r) => r.enqueue, digits: 0, higherIsBetter: true },
  { title: "c=1 jobs/s", metric: (r) => r.c1, digits: 0, higherIsBetter: true },
  { title: "c=10 jobs/s", metric: (r) => r.c10, digits: 0, higherIsBetter: true },
  { title: "pickup p50 ms", metric: (r) => r.pickup.p50, digits: 2, higherIsBetter: false },
  { title: "pickup p99 ms", metric: (r) => r.pickup.p99, digits: 2, higherIsBetter: false },
  // A peer's pickup goes the same way whoever enqueues: its own pickup is what jfast's from elsewhere compares to.
  { title: "p50 ms, enqueued elsewhere", metric: (r) => r.pickupElsewhere?.p50, peer: (r) => r.pickupElsewhere?.p50 ?? r.pickup.p50, digits: 2, higherIsBetter: false },
  { title: "p50 ms, 100k dead", metric: (r) => r.pickupDead?.p50, digits: 2, higherIsBetter: false },
  { title: "p99 ms, 100k dead", metric: (r) => r.pickupDead?.p99, digits: 2, higherIsBetter: false },
  { title: "peak RSS MiB", metric: (r) => r.rssMb, digits: 0, higherIsBetter: false },
];

function values(results: RunResult[], subject: string, metric: Metric): number[] {
  return results.filter((r) => r.subject === subject).map(metric).filter((v): v is number => v !== undefined);
}

export function renderReport(params: {
  results: RunResult[];
  ceilings: { postgres: string[]; redis: string[] } | null;
  machine: string;
  loadBefore: string;
  loadAfter: string;
  env: { jobs: number; runs: number; pickups: number; dead: number };
}): string {
  const { results, env } = params;
  const lines: string[] = [
    "# Benchmarks",
    "",
    `Generated by \`npm run bench\` on ${new Date().toISOString()}. Do not edit by hand: rerun it.`,
    "",
    `Machine: ${params.machine}. Load average (1, 5, 15 min) ${params.loadBefore} at the start, ${params.loadAfter} at the end.`,
    "A load average above the number of cores means other work shared the CPUs with the run: every figure below is then",
    "pessimistic for every subject alike (rounds are interleaved), so compare ratios within this file, not absolute numbers",
    "across machines or runs.",
    "",
    `Workload: ${env.jobs} no-op jobs enqueued in bulk, then processed by one worker at concurrency 1, enqueued again and`,
    `processed at concurrency 10; ${env.pickups} single jobs into an idle worker (enqueue call → handler start, 20 ms apart),`,
    "enqueued in the worker's process (\"pickup\"), and for jfast on PostgreSQL and on Redis also by a second instance with",
    "its own connections (\"enqueued elsewhere\"): a job enqueued next to an idle jfast worker is handed over in memory",
    "(docs/postgres.md#in-process-hand-off, docs/redis.md#in-process-hand-off), one from elsewhere is claimed through the",
    "store. A peer's job always reaches its worker through the store (BullMQ's Queue and Worker, for one, have",
    "connections of their own), so its ratio in that column is taken against its own pickup; its cell there stays empty.",
    `Then ${env.dead} dead rows are added to the queue's table (PostgreSQL subjects only) and the pickup measured again`,
    "(\"100k dead\"), for jfast with jobs enqueued by the second instance, so that the worker claims each one through the",
    `table past the dead rows. Each figure is the median of ${env.runs} runs, (min–max) in brackets; every run is a fresh`,
    "process, and its peak RSS covers the enqueuing and the worker together. The tables \"producer and worker in",
    "separate processes\" run the same workload with the enqueuing in one process and the worker in a child process",
    "of its own.",
    "",
    "The Settings lines under each table say what each subject runs with, including",
    "the server's durability settings: jfast's PostgreSQL claim commits with synchronous_commit off unless",
    "`durable_claims = true` (the row \"synchronous_commit on\"); the shared Redis runs without persistence, and the rows",
    "marked \"AOF everysec\" run on a private redis-server the bench starts with `--appendonly yes --appendfsync everysec`.",
    "The pgbench lines are references, not ceilings: jfast and its peers batch claims and completions.",
    "",
    "To rerun (services as in docker/: PostgreSQL, Redis, RabbitMQ on their default ports, or DATABASE_URL, REDIS_URL,",
    "AMQP_URL): `npm ci && npm run bench`. `BENCH_JOBS` (default 20000), `BENCH_RUNS` (3), `BENCH_PICKUPS` (200),",
    "`BENCH_DEAD` (100000), `BENCH_ONLY=jfast-redis,bullmq` (a subset), `BENCH_CEILINGS=0` (skip pgbench and",
    "redis-benchmark). The AOF rows need `redis-server` on the PATH. One subject by hand:",
    "`cd bench && npx tsx run-subject.ts jfast-postgres`.",
    "",
  ];
  for (const group of GROUPS) {
    const present = [...group.jfast, ...group.peers].filter((s) => results.some((r) => r.subject === s));
    if (present.length === 0) continue;
    const columns = group.split ? COLUMNS.filter((c) => SPLIT_COLUMNS.has(c.title)) : COLUMNS;
    lines.push(`## ${group.backend}${group.split ? ", producer and worker in separate processes" : ""}`, "");
    if (group.split) {
      lines.push(
        "The same workload with the enqueuing in one process and the worker in another, as a service and its worker",
        "run: the pickup is of a job enqueued in the other process, timed on the machine's monotonic clock, which",
        "both processes read. Peak RSS adds the two processes' peaks.",
        "",
      );
    }
    lines.push(`| subject | ${columns.map((c) => c.title).join(" | ")} |`, `|---|${columns.map(() => "---:").join("|")}|`);
    for (const subject of present) {
      const label = results.find((r) => r.subject === subject)!.label;
      lines.push(`| ${label} | ${columns.map((c) => withSpread(values(results, subject, c.metric), c.digits)).join(" | ")} |`);
    }
    for (const ours of group.jfast) {
      for (const peer of group.peers) {
        if (!present.includes(peer) || !present.includes(ours)) continue;
        if (group.comparable && !group.comparable(ours, peer)) continue;
        const ratios = columns.map((c) => {
          const mine = median(values(results, ours, c.metric));
          const theirs = median(values(results, peer, c.peer ?? c.metric));
          if (!Number.isFinite(mine) || !Number.isFinite(theirs) || theirs === 0) return "—";
          const ratio = c.higherIsBetter ? mine / theirs : theirs / mine;
          return `**${ratio.toFixed(2)}×**`;
        });
        const label = results.find((r) => r.subject === ours)!.label;
        lines.push(`| ${label} / ${peer} | ${ratios.join(" | ")} |`);
      }
    }
    lines.push("", "Ratios: above 1× means jfast is better (faster, or lower latency or memory).");
    for (const peer of group.peers) if (TARGETS[peer]) lines.push(`Against ${peer}, ${TARGETS[peer]}.`);
    if (group.split) {
      lines.push("", "Settings: as in the single-process table above.", "");
      continue;
    }
    lines.push("", "Settings:");
    for (const subject of present) {
      const r = results.find((x) => x.subject === subject)!;
      lines.push(`- ${r.label}: ${r.settings}`);
    }
    if (group.ceiling && params.ceilings) for (const line of params.ceilings[group.ceiling]) lines.push(`- ${line}`);
    lines.push("");
  }
  lines.push(readFileSync(new URL("../analysis.md", import.meta.url), "utf8").trim(), "");
  return lines.join("\n");
}
