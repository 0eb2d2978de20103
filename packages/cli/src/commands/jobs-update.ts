import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "jobs update",
  summary: "edit a waiting or scheduled job: its payload, priority or run time",
  description: `
Changes a job that has not started yet (ready, or scheduled: delayed, backing off, snoozed) in place, as the
admin API's jobs.update does: --payload replaces its payload (checked against its task's schema: a payload it
refuses changes nothing; sealed when the task is encrypted), --priority sets 0 (first) to 9 (last), --run-at
or --delay sets when it may run (--delay 0 makes it due now). The job keeps its id and attempts.

One atomic step on PostgreSQL, Redis and the memory queue: a job a worker claimed meanwhile, or one that
finished or died, is refused (JOB_NOT_EDITABLE, naming its state) and nothing changes. RabbitMQ cannot change a
published message: NOT_SUPPORTED.

Written to the service's audit trail (jobs.update) with the actor cli:<your user name> (or the name given with
--as), with the before and after of each change.

Exit codes: 0 edited; 1 refused (unknown id, not waiting, payload invalid, not supported); 2 usage error.`,
  flags: {
    payload: { type: "string", placeholder: "JSON", description: "the new payload (checked against the task's schema)" },
    priority: { type: "string", placeholder: "N", description: "the new priority, 0 (first) to 9 (last)" },
    "run-at": { type: "string", placeholder: "ISO", description: "when it may run, an ISO time (2026-12-24T08:00:00Z)" },
    delay: { type: "string", placeholder: "DURATION", description: "when it may run, from now: 30s, 5m, 1h30m, 0 for now" },
    json: { type: "boolean", description: "print the job as it waits now as JSON" },
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", description: "the job's id" }],
  examples: [
    "jfast jobs update 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e --payload '{\"invoice\":\"inv-7\"}'",
    "jfast jobs update 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e --priority 1 --delay 10m",
    "jfast jobs update 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e --run-at 2026-12-24T08:00:00Z",
  ],
  docs: "jfast docs cli#jfast-jobs-update",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("name one job to edit: jfast jobs update <id> [--payload JSON] [--priority N] [--run-at ISO | --delay DURATION]");
    const id = positionals[0]!;
    const changes = {
      ...(flags.payload !== undefined ? { payload: parseJson(flags.payload) } : {}),
      ...(flags.priority !== undefined ? { priority: parsePriority(flags.priority) } : {}),
      ...runAtOf(flags["run-at"], flags.delay),
    };
    if (Object.keys(changes).length === 0) throw new UsageError("nothing to change: give --payload, --priority, --run-at or --delay");
    const actor = repairActor(flags.as);
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      // The admin API's own operation, so the edit is checked and audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const result = await repairs.updateJob({ id, ...changes });
      if (flags.json) io.out(`${JSON.stringify(result, null, 2)}\n`);
      else io.out(`updated ${result.id}: ${result.state}, priority ${result.priority}, runs at ${result.availableAt}${result.payloadChanges > 0 ? `, ${result.payloadChanges} payload change${result.payloadChanges === 1 ? "" : "s"}` : ""}\n`);
      return 0;
    });
  },
});

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--payload is not JSON: ${(error as Error).message}`);
  }
}

function parsePriority(text: string): number {
  const value = Number(text);
  if (!/^\d$/.test(text) || value > 9) throw new UsageError(`--priority is a whole number from 0 (first) to 9 (last), got "${text}"`);
  return value;
}

/** --run-at ISO or --delay DURATION (never both) as the time the job may run. */
function runAtOf(runAt: string | undefined, delay: string | undefined): { runAt?: Date } {
  if (runAt !== undefined && delay !== undefined) throw new UsageError("give --run-at or --delay, not both");
  if (runAt !== undefined) {
    const at = new Date(runAt);
    if (!/^\d{4}-\d\d-\d\dT/.test(runAt) || Number.isNaN(at.getTime())) throw new UsageError(`--run-at expects an ISO time such as 2026-12-24T08:00:00Z, got "${runAt}"`);
    return { runAt: at };
  }
  if (delay !== undefined) return { runAt: new Date(Date.now() + durationMs(delay)) };
  return {};
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** 30s, 5m, 1h30m, 1d, 250ms; "0" is now. */
export function durationMs(text: string): number {
  if (text === "0") return 0;
  let total = 0;
  let consumed = "";
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(ms|d|h|m|s)/g)) {
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    consumed += match[0];
  }
  if (consumed !== text || consumed === "") throw new UsageError(`--delay expects a duration such as 30s, 5m, 1h30m or 1d (0 for now), got "${text}"`);
  return total;
}
