import { parseSince, readStatsLatency, statsUnsupported, type Percentiles, type StatsLatencyView } from "@jfast/runtime";
import { defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { formatTable } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { resolveRoot } from "../service.js";

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

export default defineCommand({
  name: "stats",
  summary: "per task: jobs completed, failed and dead, run time and wait (p50, p95, p99) over the last hour",
  description: `
Reads the run-time and wait history every worker process of the service adds to its store each few seconds
(the database, else the Redis queue's keys), as the admin API's stats.latency does: per task, the attempts that
completed, failed and went dead, and the p50, p95 and p99 of their run time and of their wait (from when the job
was due to when its attempt started), in milliseconds, over the last hour or --since (up to 7d: minutes up to a
day, hours beyond). Percentiles come from log buckets about 19 % wide. Then, per named queue, the same over all
its tasks and how long its oldest job due now has waited. --json prints an array of
{ task, completed, failed, dead, runMs: { p50, p95, p99 }, waitMs: { p50, p95, p99 } }. A RabbitMQ queue
without the database plugin keeps no history: NOT_SUPPORTED.`,
  flags: {
    task: { type: "string", placeholder: "NAME", description: "only this task" },
    since: { type: "string", placeholder: "DURATION", default: "1h", description: "how far back: 30m, 1h, 24h, 7d" },
    queue: { ...QUEUE_FLAG, description: "only this named queue (default: every queue of the service)" },
    json: { type: "boolean", description: "print one object per task as JSON" },
    root: ROOT_FLAG,
  },
  examples: ["jfast stats", "jfast stats --task invoice.send_email --since 24h", "jfast stats --json"],
  docs: "jfast docs cli#jfast-stats",
  async run({ flags, io }) {
    const sinceMs = parseSince(flags.since);
    if (sinceMs === null || sinceMs > WEEK_MS) throw new UsageError(`--since is a duration like 30m, 1h, 24h or 7d, at most 7d (not "${flags.since}")`);
    const view = await withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      const queue = jfast.require("queue");
      const unsupported = statsUnsupported(queue, flags.queue);
      if (unsupported) throw unsupported;
      return readStatsLatency(queue, { sinceMs, task: flags.task, queue: flags.queue });
    });
    if (flags.json) {
      const rows = view.tasks.map(({ task, completed, failed, dead, runMs, waitMs, queue }) => ({ task, completed, failed, dead, runMs, waitMs, queue }));
      io.out(`${JSON.stringify(rows, null, 2)}\n`);
    } else io.out(formatStats(view, flags.since));
    return 0;
  },
});

function formatStats(view: StatsLatencyView, since: string): string {
  if (view.tasks.length === 0) return `no attempts recorded in the last ${since}\n`;
  const ms = (p: Percentiles) => [p.p50, p.p95, p.p99].map((v) => (v === null ? "-" : duration(v))).join(" / ");
  const tasks = formatTable(
    ["TASK", "COMPLETED", "FAILED", "DEAD", "RUN p50/p95/p99", "WAIT p50/p95/p99"],
    view.tasks.map((t) => [t.task, String(t.completed), String(t.failed), String(t.dead), ms(t.runMs), ms(t.waitMs)]),
  );
  const queues = formatTable(
    ["QUEUE", "COMPLETED", "FAILED", "DEAD", "RUN p50/p95/p99", "WAIT p50/p95/p99", "OLDEST WAITING"],
    view.queues.map((q) => [q.queue, String(q.completed), String(q.failed), String(q.dead), ms(q.runMs), ms(q.waitMs), q.oldestWaitingMs === null ? "-" : duration(q.oldestWaitingMs)]),
  );
  return `last ${since}, per ${view.span}, stored in ${view.stored}\n${tasks}\n${queues}`;
}

/** 0.5ms, 42ms, 1.2s, 3m 5s */
function duration(ms: number): string {
  if (ms < 10) return `${ms}ms`;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return s < 3600 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
