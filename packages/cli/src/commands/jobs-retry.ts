import { AS_FLAG, defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { explainMissing, withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";
import { parsePayload } from "../schedules-access.js";

export default defineCommand({
  name: "jobs retry",
  summary: "requeue dead letters with their attempts reset",
  description: `
Moves dead letters back to the queue with their attempts reset to 0, runnable at once. Their error history
is kept. Ids that are not dead letters are reported on stderr. The retry is written to the service's audit
trail with the actor cli:<your user name> (or the name given with --as), as a retry from the admin API or
the dashboard is.

With --payload JSON, one dead letter is retried with that payload instead: checked against its task's schema
(a payload it refuses changes nothing), enqueued as a new job whose id is printed, and the dead letter discarded;
the audit entry keeps what changed.

Exit codes: 0 every id was retried; 1 some ids are unknown or not dead (the others were retried);
2 usage error.`,
  flags: {
    all: { type: "boolean", description: "retry every dead letter" },
    payload: { type: "string", placeholder: "JSON", description: "retry one dead letter with this payload instead (checked against the task's schema)" },
    queue: QUEUE_FLAG,
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "ids of dead letters, as printed by `jfast jobs dead`" }],
  examples: ["jfast jobs retry 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e", "jfast jobs retry --all", "jfast jobs retry 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e --payload '{\"invoice\":\"inv-7\"}'", "jfast jobs retry 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e --as ops-oncall"],
  docs: "jfast docs cli#jfast-jobs-retry",
  async run({ flags, positionals, io }) {
    const params = selection(flags.all, positionals, "retry");
    const actor = repairActor(flags.as);
    if (flags.payload !== undefined) {
      if (!("ids" in params) || params.ids.length !== 1) throw new UsageError("--payload retries one dead letter: jfast jobs retry <id> --payload JSON");
      const payload = parsePayload(flags.payload);
      return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
        const repairs = await cliRepairs(jfast, io, actor);
        const { missing, jobId } = await repairs.retryDeadWithPayload({ id: params.ids[0]!, payload, ...(flags.queue === undefined ? {} : { queue: flags.queue }) });
        if (missing.length > 0) {
          io.err(`${missing[0]} is not a dead letter\n`);
          return 1;
        }
        io.out(`retried ${params.ids[0]} with the edited payload as job ${jobId}\n`);
        return 0;
      }, flags.queue);
    }
    return withQueue(resolveRoot(flags.root, io.cwd), async (backend, jfast) => {
      // The admin API's own operation, so the retry is audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const { retried, missing } = await repairs.retryDead({ ...params, ...(flags.queue === undefined ? {} : { queue: flags.queue }) });
      for (const id of retried) io.out(`retried ${id}\n`);
      if (retried.length === 0 && missing.length === 0) io.out("no dead letters to retry\n");
      for (const line of await explainMissing(backend, missing)) io.err(`${line}\n`);
      return missing.length > 0 ? 1 : 0;
    }, flags.queue);
  },
});

/** `<id>...` or `--all`, never both, never neither. */
export function selection(all: boolean, ids: string[], verb: string): { ids: string[] } | { all: true } {
  if (all && ids.length > 0) throw new UsageError(`give either ids or --all, not both`);
  if (!all && ids.length === 0) throw new UsageError(`name the dead letters to ${verb}: jfast jobs ${verb} <id>... or --all`);
  return all ? { all: true } : { ids: [...new Set(ids)] };
}
