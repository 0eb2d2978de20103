import type { WorkersView, WorkerView } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { CliError } from "../errors.js";
import { ago, formatTable } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { cliActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "workers",
  summary: "list the worker processes registered with the queue, online or gone, and the jobs each runs",
  description: `
Lists the worker processes registered with the service's queue, as the admin API's workers.list does: id (the
lockedBy of the jobs it runs), host and pid, state, its named queues and slots, when it started, its last
heartbeat, and the ids of the jobs it runs now. A worker heartbeats every 10 seconds; one that missed 3 heartbeats
(killed, its host lost) is shown as gone, and forgotten 10 minutes after its last one; a worker that stops cleanly
leaves at once. --json prints an array of { id, host, pid, queues, concurrency, startedAt, heartbeatAt, running,
version, state, forgetAt }. A RabbitMQ queue without the database plugin keeps no registry: NOT_SUPPORTED. See
jfast docs worker#the-worker-registry.`,
  flags: {
    json: { type: "boolean", description: "print the workers as a JSON array" },
    root: ROOT_FLAG,
  },
  examples: ["jfast workers", "jfast workers --json | jq '.[] | select(.state == \"gone\") | .id'"],
  docs: "jfast docs cli#jfast-workers",
  async run({ flags, io }) {
    const view = await withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => (await jfast.repairs(cliActor())).listWorkers());
    const workers = requireRegistry(view);
    io.out(flags.json ? `${JSON.stringify(workers.map(workerJson), null, 2)}\n` : formatWorkers(workers));
    return 0;
  },
});

function requireRegistry(view: WorkersView): WorkerView[] {
  if (view.supported) return view.workers;
  throw new CliError(view.reason ?? "this service's queue keeps no worker registry", {
    code: "NOT_SUPPORTED",
    hint: "enable the database plugin for a RabbitMQ queue: its workers then register in jfast_workers",
    docs: "jfast docs worker#the-worker-registry",
  });
}

/** `jfast workers --json`: the fields the issue names first, then what the registry adds. */
function workerJson(w: WorkerView): Record<string, unknown> {
  const { id, host, pid, queues, concurrency, startedAt, heartbeatAt, running, version, state, forgetAt } = w;
  return { id, host, pid, queues, concurrency, startedAt, heartbeatAt, running, version, state, forgetAt };
}

function formatWorkers(workers: readonly WorkerView[], now: number = Date.now()): string {
  if (workers.length === 0) return "no worker is registered (a worker registers when `jfast worker` or `jfast dev` starts)\n";
  const rows = workers.map((w) => [
    w.id,
    `${w.host}:${w.pid}`,
    w.state,
    w.queues.join(","),
    `${w.running.length}/${w.concurrency}`,
    ago(w.startedAt, now),
    ago(w.heartbeatAt, now),
    w.running.join(" "),
  ]);
  return formatTable(["ID", "HOST:PID", "STATE", "QUEUES", "RUNNING", "STARTED", "HEARTBEAT", "JOBS"], rows);
}
