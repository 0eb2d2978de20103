import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { requireJobActions, withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "jobs delete",
  summary: "delete waiting jobs (ready or scheduled) for good",
  description: `
Deletes waiting jobs for good: a ready or scheduled job is removed and never runs; enqueueing its id again makes
a new job. A running, finished or dead job is left as it is (dead letters: jfast jobs discard; a running job:
jfast jobs cancel). PostgreSQL, Redis and the memory queue; RabbitMQ answers NOT_SUPPORTED (cancel instead).

Each is written to the service's audit trail (jobs.delete, one entry per id) with the actor cli:<your user name>
(or the name given with --as), as the same action from the admin API or the dashboard is.

Exit codes: 0 every id was deleted; 1 some ids are unknown or not waiting (the others were deleted); 2 usage error.`,
  flags: {
    json: { type: "boolean", description: "print one { id, done, state } record per id as JSON" },
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "the jobs' ids" }],
  examples: ["jfast jobs delete 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e"],
  docs: "jfast docs cli#jfast-jobs-delete",
  async run({ flags, positionals, io }) {
    if (positionals.length === 0) throw new UsageError("name the jobs to delete: jfast jobs delete <id>...");
    const actor = repairActor(flags.as);
    return withQueue(resolveRoot(flags.root, io.cwd), async (backend, jfast) => {
      requireJobActions(backend, "delete");
      // The admin API's own operation, so each is audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const results = [];
      for (const id of new Set(positionals)) results.push({ id, ...(await repairs.deleteJob(id)) });
      if (flags.json) io.out(`${JSON.stringify(results, null, 2)}\n`);
      for (const r of results) {
        if (r.done) {
          if (!flags.json) io.out(`deleted ${r.id}\n`);
        } else io.err(r.state === null ? `jfast: no job with id ${r.id}\n` : `jfast: ${r.id} was not deleted (it is ${r.state})\n`);
      }
      return results.every((r) => r.done) ? 0 : 1;
    });
  },
});
