import type { CommandDefinition } from "./command.js";

export interface CommandEntry {
  /** As typed: "worker", "jobs retry". Words before the first flag select the command (longest match wins). */
  name: string;
  /** One line for `jfast --help`; the module holds the full help. */
  summary: string;
  /** Loaded only when the command runs, so `jfast --help` stays instant and commands do not pay for each other. */
  load: () => Promise<{ default: CommandDefinition<any> }>;
}

/**
 * Every command the `jfast` binary knows. Adding one is one line here plus its module under commands/
 * (export default defineCommand({...})).
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: "start", summary: "serve the service's HTTP API in production (no worker: run `jfast worker` beside it)", load: () => import("./commands/start.js") },
  { name: "build", summary: "compile the service into a runnable dist/ with jfast.toml, contracts.toml and its assets", load: () => import("./commands/build.js") },
  { name: "worker", summary: "run jobs from the queue until SIGTERM", load: () => import("./commands/worker.js") },
  { name: "dev", summary: "run the service's HTTP API and a worker in one process (--watch: restart on changes)", load: () => import("./commands/dev.js") },
  { name: "jobs dead", summary: "list dead letters, newest death first, with the error that killed each", load: () => import("./commands/jobs-dead.js") },
  { name: "jobs retry", summary: "requeue dead letters with their attempts reset", load: () => import("./commands/jobs-retry.js") },
  { name: "jobs discard", summary: "delete dead letters for good", load: () => import("./commands/jobs-discard.js") },
  { name: "jobs show", summary: "print one job: state, attempts, lease and every recorded error", load: () => import("./commands/jobs-show.js") },
  { name: "jobs check-payloads", summary: "count per task the waiting and scheduled jobs the current payload schema would refuse", load: () => import("./commands/jobs-check-payloads.js") },
  { name: "jobs list", summary: "list the jobs in one state (ready, scheduled, running, completed, dead, cancelled, expired), a page at a time", load: () => import("./commands/jobs-list.js") },
  { name: "jobs run-now", summary: "make scheduled jobs (delayed, backing off, snoozed) due now", load: () => import("./commands/jobs-run-now.js") },
  { name: "jobs update", summary: "edit a waiting or scheduled job: its payload, priority or run time", load: () => import("./commands/jobs-update.js") },
  { name: "jobs delete", summary: "delete waiting jobs (ready or scheduled) for good", load: () => import("./commands/jobs-delete.js") },
  { name: "jobs cancel", summary: "cancel waiting or running jobs: a waiting one never runs, a running one is told to stop", load: () => import("./commands/jobs-cancel.js") },
  { name: "flows list", summary: "list flows newest first, with their state and how many steps completed", load: () => import("./commands/flows-list.js") },
  { name: "flows show", summary: "print one flow: each step's state, job, the steps it runs after, result or error", load: () => import("./commands/flows-show.js") },
  { name: "trace", summary: "print this service's share of a request's timeline (jobs, attempts, flows, events, outbox rows, Kafka hops)", load: () => import("./commands/trace.js") },
  { name: "flows cancel", summary: "cancel every step of a flow that has not finished", load: () => import("./commands/flows-cancel.js") },
  { name: "flows retry", summary: "retry a dead step of a flow, which resumes the flow where it stopped", load: () => import("./commands/flows-retry.js") },
  { name: "alerts", summary: "list the alert rules with their state (ok, firing, resolved) and the latest notifications", load: () => import("./commands/alerts.js") },
  { name: "workers", summary: "list the worker processes registered with the queue, online or gone, and the jobs each runs", load: () => import("./commands/workers.js") },
  { name: "queue pause", summary: "stop every worker of the service from starting a task's jobs", load: () => import("./commands/queue-pause.js") },
  { name: "queue resume", summary: "let workers start a paused task's jobs again", load: () => import("./commands/queue-resume.js") },
  { name: "outbox dead", summary: "list dead outbox rows, newest first, with the error that killed each", load: () => import("./commands/outbox-dead.js") },
  { name: "outbox retry", summary: "give dead outbox rows back to the relay with their attempts reset", load: () => import("./commands/outbox-retry.js") },
  { name: "outbox discard", summary: "delete dead outbox rows for good", load: () => import("./commands/outbox-discard.js") },
  { name: "jobs enqueue", summary: "enqueue a job by task name (operators, scripts)", load: () => import("./commands/jobs-enqueue.js") },
  { name: "contracts check", summary: "check contracts.toml against what the modules publish, subscribe and enqueue", load: () => import("./commands/contracts-check.js") },
  { name: "contracts show", summary: "list each module's events, subscribers, tasks and dependencies", load: () => import("./commands/contracts-show.js") },
  { name: "contracts diff", summary: "what a change does to the contracts: edges added and removed, violations new and fixed", load: () => import("./commands/contracts-diff.js") },
  { name: "contracts md", summary: "write CONTRACTS.md: who publishes which event and who listens", load: () => import("./commands/contracts-md.js") },
  { name: "keys rotate", summary: "re-encrypt waiting jobs, dead letters and outbox rows with the first key of JFAST_ENCRYPTION_KEYS", load: () => import("./commands/keys-rotate.js") },
  { name: "schedules list", summary: "list the service's schedules, declared and made at run time, with their next tick", load: () => import("./commands/schedules-list.js") },
  { name: "schedules create", summary: "make a schedule at run time: every process of the service fires it, without a restart", load: () => import("./commands/schedules-create.js") },
  { name: "schedules update", summary: "edit a schedule made at run time (cron or every, zone, payload, catch-up, task)", load: () => import("./commands/schedules-update.js") },
  { name: "schedules pause", summary: "stop a schedule's ticks in every process until it is resumed", load: () => import("./commands/schedules-pause.js") },
  { name: "schedules resume", summary: "let a paused schedule tick again, from its next tick", load: () => import("./commands/schedules-resume.js") },
  { name: "schedules trigger", summary: "enqueue one job of a schedule now, outside its ticks", load: () => import("./commands/schedules-trigger.js") },
  { name: "schedules delete", summary: "delete a schedule made at run time; every process stops firing it", load: () => import("./commands/schedules-delete.js") },
  { name: "stats", summary: "per task: jobs completed, failed and dead, run time and wait (p50, p95, p99) over the last hour", load: () => import("./commands/stats.js") },
  { name: "schedule next", summary: "print the next ticks of a cron expression in UTC, as the scheduler computes them", load: () => import("./commands/schedule-next.js") },
  { name: "ai context", summary: "print a compact description of the service for whoever edits it next", load: () => import("./commands/ai-context.js") },
  { name: "deploy", summary: "generate a compose file or Kubernetes manifests for the service", load: () => import("./commands/deploy.js") },
  { name: "docs", summary: "print a docs page, or one section of it (jfast docs worker#concurrency)", load: () => import("./commands/docs.js") },
  { name: "workspace compose", summary: "generate one compose file for every service of the workspace", load: () => import("./commands/workspace-compose.js") },
  { name: "workspace contracts check", summary: "jfast contracts check for every service of the workspace, and the events between them", load: () => import("./commands/workspace-contracts-check.js") },
  { name: "workspace contracts diff", summary: "jfast contracts diff for every service of the workspace", load: () => import("./commands/workspace-contracts-diff.js") },
];

/** Finds the command named by the leading words of argv; `rest` is what follows it. */
export function matchCommand(argv: readonly string[]): { entry: CommandEntry; rest: string[] } | null {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith("-")) break;
    words.push(arg);
  }
  for (let n = words.length; n > 0; n--) {
    const name = words.slice(0, n).join(" ");
    const entry = COMMANDS.find((c) => c.name === name);
    if (entry) return { entry, rest: argv.slice(n) };
  }
  return null;
}

/** Commands under a group word ("jobs" → jobs dead, jobs retry, …). */
export function commandsInGroup(group: string): CommandEntry[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${group} `));
}
