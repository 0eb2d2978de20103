import type { TraceEntry, TraceView } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { formatTable, oneLine } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { cliActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "trace",
  summary: "print this service's share of a request's timeline: its jobs, attempts, flows, events, outbox rows and Kafka hops",
  description: `
Finds everything this service recorded for one request, from its request id, or from the id of one of its jobs
or flows: the jobs carrying the request id (and the jobs they enqueued, which carry it too), each failed
attempt, the flows they are steps of, the local events and the subscriber jobs that delivered them, and the
outbox rows the request wrote (an event row is the hop to Kafka, where other services take over). Oldest first,
with when each started and finished, how long it took and how it ended, as the admin API's trace.get gives it.
Other services' shares are theirs to print (the dashboard's Timeline page joins them). --json prints
{ service, id, matched, requestId, entries: [{ kind, id, service, name, startedAt, finishedAt, durationMs,
outcome, parentId, requestId, queue?, error? }], complete, notes }. A queue with no index by request id (Redis)
is read in a bounded window and RabbitMQ keeps no finished job: notes say so. Exit code 1 when nothing is found.
See jfast docs cli#jfast-trace and jfast docs admin-api#timeline.`,
  flags: {
    json: { type: "boolean", description: "print the timeline as JSON" },
    limit: { type: "string", placeholder: "N", description: "the most jobs to read (default 500, at most 1000)" },
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", description: "a request id, a job id or a flow id" }],
  examples: ["jfast trace 5f0c1d2e-req", "jfast trace 0193c9a4-6b1e-7c55-9d0e-2f4b8a1c3d5e --json | jq '.entries[] | select(.outcome == \"dead\")'"],
  docs: "jfast docs cli#jfast-trace",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("give exactly one id: jfast trace <request id | job id | flow id>");
    const id = positionals[0]!;
    const limit = flags.limit === undefined ? 500 : Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be a whole number from 1 to 1000, got ${JSON.stringify(flags.limit)}`);
    const view = await withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => (await jfast.repairs(cliActor())).trace(id, limit));
    if (flags.json) {
      io.out(`${JSON.stringify(view, null, 2)}\n`);
      return view.entries.length === 0 ? 1 : 0;
    }
    if (view.entries.length === 0) {
      io.err(`jfast: ${view.service} recorded nothing for ${id} (no job, flow or request with that id)${notes(view)}\n`);
      return 1;
    }
    io.out(formatTrace(view));
    return 0;
  },
});

function notes(view: TraceView): string {
  return view.notes.length === 0 ? "" : `\n${view.notes.map((note) => `note: ${note}`).join("\n")}`;
}

/** One line per entry, indented under its parent when the parent is listed, with its offset from the first start. */
export function formatTrace(view: TraceView): string {
  const start = Date.parse(view.entries[0]!.startedAt);
  const ids = new Set(view.entries.map((e) => e.id));
  const depth = (entry: TraceEntry): number => {
    let d = 0;
    let parent = entry.parentId;
    const seen = new Set<string>();
    while (parent !== null && ids.has(parent) && !seen.has(parent) && d < 4) {
      seen.add(parent);
      d += 1;
      parent = view.entries.find((e) => e.id === parent)?.parentId ?? null;
    }
    return d;
  };
  const rows = view.entries.map((entry) => [
    `+${Date.parse(entry.startedAt) - start} ms`,
    `${"  ".repeat(depth(entry))}${entry.kind}`,
    entry.name,
    entry.outcome,
    entry.durationMs === null ? "-" : `${entry.durationMs} ms`,
    entry.id,
    entry.error ? oneLine(entry.error, 80) : "",
  ]);
  const head = [`service   ${view.service}`, `request   ${view.requestId ?? "(none)"}`, `found     ${view.matched === "request" ? "by request id" : `by ${view.matched} id ${view.id}`}`, `started   ${view.entries[0]!.startedAt}`];
  return `${head.join("\n")}\n\n${formatTable(["AT", "KIND", "NAME", "OUTCOME", "TOOK", "ID", "ERROR"], rows)}${notes(view)}${view.notes.length ? "\n" : ""}`;
}
