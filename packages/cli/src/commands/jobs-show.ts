import { describeLimitWait, limitsOf, type JobInfo, type LimitUsage, type TaskLimits } from "@jfast/runtime";
import { defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { describeError } from "../format/dead-letters.js";
import { withQueue } from "../queue-access.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "jobs show",
  summary: "print one job: state, priority, attempts with their timing and logs, lease, errors, progress and result",
  description: `
Prints one job as the queue holds it: state, priority, attempts, tenant, lease, time of death, the error of every
failed attempt (with --verbose, their stacks), a completed job's result (or why none was stored), its progress,
when it was enqueued and how long it waited, and each attempt's start, duration, worker, outcome and the lines its
handler logged (tools.log). --json prints the record: \`progress\`, \`logs\` (the last attempt's), \`attempts\` (each
with its \`logs\`), \`enqueuedAt\`, \`waitMs\`. Exit code 1 when no job has that id.`,
  flags: {
    json: { type: "boolean", description: "print the record as JSON" },
    queue: { ...QUEUE_FLAG, description: "look in this named queue only (default: every queue of the service)" },
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", description: "the job's id" }],
  examples: ["jfast jobs show 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e --json"],
  docs: "jfast docs cli#jfast-jobs-show",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("give exactly one job id: jfast jobs show <id>");
    const id = positionals[0]!;
    let limit: { limits: TaskLimits; usage: LimitUsage | null } | null = null;
    const info = await withQueue(resolveRoot(flags.root, io.cwd), async (backend, jfast) => {
      const withLimit = async (found: JobInfo | null, from: typeof backend) => {
        // The limits of its task, and what a waiting job waits on (docs/tasks.md#limits).
        const definition = found ? jfast.require("tasks").get(found.job.task) : undefined;
        const limits = definition ? limitsOf([definition]).get(definition.name) : undefined;
        if (found && limits) limit = { limits, usage: found.state === "ready" ? await from.limitUsage({ task: found.job.task }).catch(() => null) : null };
        return found;
      };
      if (flags.queue !== undefined) return withLimit(await backend.getJob({ id }), backend);
      // An id names no queue: each named queue is asked in turn (docs/queues.md#cli).
      for (const named of jfast.require("queue").queues.values()) {
        const found = await named.backend.getJob({ id });
        if (found) return withLimit(found, named.backend);
      }
      return null;
    }, flags.queue);
    if (!info) {
      io.err(`jfast: no job with id ${id}\n`);
      return 1;
    }
    const limitLine = limit === null ? null : describeLimit(info, limit);
    io.out(flags.json ? `${JSON.stringify(limitLine === null ? info : { ...info, limit: limitLine }, null, 2)}\n` : formatJob(info, io.verbose, limitLine));
    return 0;
  },
});

/** `report:42 (held while ready, running)` or `report:42 (held for 60000 ms from its enqueue)`. */
function describeUnique(unique: NonNullable<JobInfo["job"]["unique"]>): string {
  const how = unique.periodMs !== null ? `held for ${unique.periodMs} ms from its enqueue` : `held while ${(unique.states ?? []).join(", ")}`;
  return `${unique.key} (${how})`;
}

/** `concurrency 5, 10 per 1000 ms; waits on concurrency 5 of billing.charge: 5 running`. */
function describeLimit(info: JobInfo, { limits, usage }: { limits: TaskLimits; usage: LimitUsage | null }): string {
  const parts = [
    limits.concurrency !== null ? `concurrency ${limits.concurrency}` : null,
    limits.rateLimit !== null ? `${limits.rateLimit.max} per ${limits.rateLimit.perMs} ms` : null,
  ].filter((part) => part !== null);
  const waitsOn = usage && Date.parse(info.job.availableAt) <= Date.now() ? describeLimitWait(info.job.task, limits, usage) : null;
  return waitsOn ? `${parts.join(", ")}; waits on ${waitsOn}` : parts.join(", ");
}

function formatJob(info: JobInfo, verbose: boolean, limit: string | null): string {
  const { job } = info;
  const waiting = info.state === "ready" && Date.parse(job.availableAt) > Date.now();
  const fields: [string, string | null][] = [
    ["id", job.id],
    ["task", job.task],
    ["state", waiting ? `ready (waiting until ${job.availableAt})` : info.state],
    ["priority", `${job.priority ?? 5} (0 runs first, 9 last)`],
    ["attempts", `${job.attempts} of ${job.maxAttempts ?? "?"}`],
    ["tenant", job.tenantId],
    ["request", job.requestId],
    ["created", job.createdAt],
    ["unique", job.unique ? describeUnique(job.unique) : null],
    ["limit", limit],
    ["locked by", info.lockedBy ? `${info.lockedBy} until ${info.lockedUntil}` : null],
    ["died", info.diedAt],
    ["payload", JSON.stringify(job.payload)],
    // A completed job's result (docs/tasks.md#results), or why none was stored.
    ["result", "result" in info ? JSON.stringify(info.result) : info.resultOmitted !== undefined ? `not stored: ${info.resultOmitted}` : null],
    // A job's life (docs/jobs.md): its progress, and its wait from available to first start.
    ["progress", info.progress === undefined ? null : typeof info.progress === "number" ? `${info.progress}%` : JSON.stringify(info.progress)],
    ["waited", info.waitMs === undefined || info.waitMs === null ? null : formatMs(info.waitMs)],
  ];
  const lines = fields.filter(([, value]) => value !== null).map(([label, value]) => `${label.padEnd(10)}${value}`);
  if (job.errors.length > 0) {
    lines.push("errors");
    for (const error of job.errors) {
      lines.push(`  #${error.attempt} ${error.at}  ${describeError(error)}`);
      if (verbose && error.stack) lines.push(...error.stack.split("\n").map((l) => `      ${l}`));
    }
  }
  if (info.attempts && info.attempts.length > 0) {
    lines.push("runs");
    for (const attempt of info.attempts) {
      const dropped = attempt.logsDropped ? `, ${attempt.logsDropped} more lines not kept` : "";
      lines.push(`  #${attempt.attempt} ${attempt.startedAt}  ${attempt.outcome} after ${formatMs(attempt.durationMs)} on ${attempt.workerId}${dropped}`);
      for (const line of attempt.logs) {
        const fields = line.fields === undefined ? "" : ` ${JSON.stringify(line.fields)}`;
        lines.push(`      ${line.at} ${line.level.padEnd(5)} ${line.message}${fields}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

/** `850 ms`, `12.3 s`, `4 min 05 s`. */
function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}
