import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "jobs cancel",
  summary: "cancel waiting or running jobs: a waiting one never runs, a running one is told to stop",
  description: `
Cancels jobs by id. A ready or scheduled job becomes cancelled and never runs. A running job becomes cancelled
at once; its handler sees its signal aborted with reason "cancelled" at its worker's next heartbeat, and it is
never retried. A job that already finished is left as it is. PostgreSQL and Redis; RabbitMQ with the database
plugin (the cancellation is recorded and applied when the message is delivered), else NOT_SUPPORTED.
Each cancellation is written to the service's audit trail (jobs.cancel, one entry per id) with the actor
cli:<your user name> (or the name given with --as), as one from the admin API or the dashboard is.

Exit codes: 0 every id was cancelled; 1 some ids are unknown or already finished (the others were cancelled);
2 usage error.`,
  flags: {
    json: { type: "boolean", description: "print one { id, cancelled, state } record per id as JSON" },
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "the jobs' ids" }],
  examples: ["jfast jobs cancel 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e"],
  docs: "jfast docs cli#jfast-jobs-cancel",
  async run({ flags, positionals, io }) {
    if (positionals.length === 0) throw new UsageError("name the jobs to cancel: jfast jobs cancel <id>...");
    const actor = repairActor(flags.as);
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      // The admin API's own operation, so each cancellation is audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const results = [];
      for (const id of new Set(positionals)) results.push({ id, ...(await repairs.cancelJob(id)) });
      if (flags.json) io.out(`${JSON.stringify(results, null, 2)}\n`);
      for (const r of results) {
        if (r.cancelled) {
          if (!flags.json) io.out(`cancelled ${r.id}\n`);
        } else io.err(r.state === null ? `jfast: no job with id ${r.id}\n` : `jfast: ${r.id} was not cancelled (it is ${r.state})\n`);
      }
      return results.every((r) => r.cancelled) ? 0 : 1;
    });
  },
});
