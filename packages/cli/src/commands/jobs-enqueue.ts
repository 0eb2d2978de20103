import { Job, type JobPriority, type QueueProvider } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "jobs enqueue",
  summary: "enqueue a job by task name (operators, scripts)",
  description: `
Enqueues one job for a task this service declares, outside any transaction, and prints its id. The task must
be registered in <root>'s modules: a job for an unknown task would be dead-lettered on its first claim.
Enqueueing an id that already exists changes nothing (the command says so).`,
  flags: {
    payload: { type: "string", placeholder: "JSON", default: "{}", description: "the job's payload" },
    tenant: { type: "string", placeholder: "ID", description: "the tenant the handler runs for" },
    delay: { type: "number", min: 0, placeholder: "SECONDS", description: "run no sooner than this many seconds from now" },
    id: { type: "string", placeholder: "ID", description: "the job id (default: a new UUID); reusing one makes the enqueue a no-op" },
    "max-attempts": { type: "integer", min: 1, placeholder: "N", description: "overrides the task's and [plugin.queue] max_attempts" },
    priority: { type: "integer", min: 0, max: 9, placeholder: "0-9", description: "0 runs first, 9 last (default: the task's, else 5)" },
    json: { type: "boolean", description: "print the enqueued job as JSON" },
    root: ROOT_FLAG,
  },
  positionals: [{ name: "task", description: "the task's name, e.g. invoice.send_email" }],
  examples: [`jfast jobs enqueue invoice.send_email --payload '{"invoice_id":"inv_1"}' --tenant acme`],
  docs: "jfast docs cli#jfast-jobs-enqueue",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("give exactly one task name: jfast jobs enqueue <task>");
    const task = positionals[0]!;
    let payload: unknown;
    try {
      payload = JSON.parse(flags.payload);
    } catch (error) {
      throw new UsageError(`--payload is not valid JSON: ${(error as Error).message}`);
    }
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      if (!jfast.tasks.get(task)) {
        throw new CliError(`this service declares no task named "${task}"`, {
          code: "TASK_UNKNOWN",
          hint: `known tasks: ${jfast.tasks.names().join(", ") || "(none)"}`,
          docs: "jfast docs tasks#names",
        });
      }
      const job = new Job({
        task,
        payload,
        ...(flags.id ? { id: flags.id } : {}),
        ...(flags.tenant ? { tenantId: flags.tenant } : {}),
        ...(flags.delay !== undefined ? { delayMs: Math.round(flags.delay * 1000) } : {}),
        ...(flags["max-attempts"] !== undefined ? { maxAttempts: flags["max-attempts"] } : {}),
        // Checked by new Job (PRIORITY_INVALID) like any other caller's.
        ...(flags.priority !== undefined ? { priority: flags.priority as JobPriority } : {}),
      });
      const { inserted, jobs } = await jfast.require<QueueProvider>("queue").enqueue(job);
      // A unique task's job whose key another job holds: that job's id (docs/tasks.md#unique-jobs).
      const duplicateOf = jobs[0]?.duplicate ? jobs[0].id : null;
      const existed = !inserted.includes(job.id) && duplicateOf === null;
      if (flags.json) io.out(`${JSON.stringify({ ...job.toJSON(), existed, duplicateOf }, null, 2)}\n`);
      else if (duplicateOf !== null) io.out(`${duplicateOf} holds the unique key ${JSON.stringify(job.unique?.key)}; nothing enqueued\n`);
      else io.out(existed ? `${job.id} already exists; nothing enqueued\n` : `${job.id}\n`);
      return 0;
    });
  },
});
