import { ListOrder, ListState, type JobInfo, type JobListing } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { describeError } from "../format/dead-letters.js";
import { ago, formatTable, oneLine } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { resolveRoot } from "../service.js";

const STATES = Object.values(ListState);
const ORDERS = Object.values(ListOrder);

export default defineCommand({
  name: "jobs list",
  summary: "list the jobs in one state (ready, scheduled, running, completed, dead, cancelled, expired), a page at a time",
  description: `
Lists one page of the jobs in a state, newest or oldest first, filtered by task, tenant or exact id. Each page
reads at most a bounded window of the state's index, so a page can be shorter than --limit while more follow:
the next page is printed as a cursor to pass back with --after. --json prints { rows, next, exact }.
RabbitMQ lists dead letters only (a waiting message cannot be read without taking it out of its queue); Redis
lists every state but cancelled and expired. See jfast docs cli#jfast-jobs-list for each backend's order and bounds.`,
  flags: {
    state: { type: "string", placeholder: STATES.join("|"), description: "the state to list (required)" },
    task: { type: "string", placeholder: "TASK", description: "only jobs of this task" },
    tenant: { type: "string", placeholder: "TENANT", description: "only jobs of this tenant" },
    id: { type: "string", placeholder: "ID", description: "only the job with this exact id" },
    order: { type: "string", placeholder: ORDERS.join("|"), default: "newest", description: "newest or oldest first" },
    limit: { type: "integer", min: 1, max: 500, default: 50, placeholder: "N", description: "rows per page at most" },
    after: { type: "string", placeholder: "CURSOR", description: "continue after the cursor the previous page printed" },
    json: { type: "boolean", description: "print { rows, next, exact } as JSON (rows are full job records)" },
    root: ROOT_FLAG,
  },
  examples: [
    "jfast jobs list --state scheduled",
    "jfast jobs list --state ready --task billing.charge --order oldest --limit 20",
    "jfast jobs list --state dead --json | jq -r .next",
  ],
  docs: "jfast docs cli#jfast-jobs-list",
  async run({ flags, io }) {
    const state = flags.state as ListState | undefined;
    if (!state || !STATES.includes(state)) throw new UsageError(`--state is one of ${STATES.join(", ")}: jfast jobs list --state ready`);
    const order = flags.order as ListOrder;
    if (!ORDERS.includes(order)) throw new UsageError(`--order is newest or oldest, not "${flags.order}"`);
    const page = await withQueue(resolveRoot(flags.root, io.cwd), (backend) =>
      backend.listJobs({ state, order, task: flags.task, tenantId: flags.tenant, id: flags.id, after: flags.after, limit: flags.limit }),
    );
    io.out(flags.json ? `${JSON.stringify(page, null, 2)}\n` : formatListing(state, page));
    return 0;
  },
});

function formatListing(state: ListState, page: JobListing, now: number = Date.now()): string {
  const more = page.next === null ? "" : `next page: --after ${page.next}\n`;
  if (page.rows.length === 0) return `no ${state} jobs in this page\n${more}`;
  const rows = page.rows.map((info) => [info.job.id, info.job.task, info.job.tenantId ?? "", `${info.job.attempts}/${info.job.maxAttempts ?? "?"}`, when(state, info, now), duration(info), detail(info)]);
  return `${formatTable(["ID", "TASK", "TENANT", "ATTEMPTS", timeLabel(state), "DURATION", "DETAIL"], rows)}${more}`;
}

/** How long its last attempt ran (docs/jobs.md#timing); empty before one ended. */
function duration(info: JobInfo): string {
  const ms = info.durationMs;
  if (ms === undefined) return "";
  return ms < 1000 ? `${Math.round(ms * 10) / 10} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function timeLabel(state: ListState): string {
  if (state === ListState.dead) return "DIED";
  if (state === ListState.scheduled) return "DUE";
  if (state === ListState.running) return "LOCKED UNTIL";
  if (state === ListState.completed || state === ListState.cancelled || state === ListState.expired) return "FINISHED";
  return "DUE SINCE";
}

function when(state: ListState, info: JobInfo, now: number): string {
  const at = state === ListState.dead ? info.diedAt : state === ListState.running ? info.lockedUntil : state === ListState.completed || state === ListState.cancelled || state === ListState.expired ? (info.finishedAt ?? null) : info.job.availableAt;
  if (!at) return "";
  return `${at.replace(/\.\d{3}Z$/, "Z")} (${Date.parse(at) > now ? "in the future" : ago(at, now)})`;
}

function detail(info: JobInfo): string {
  if (info.state === "running") return info.lockedBy ? `worker ${info.lockedBy}` : "";
  const last = info.job.errors.at(-1);
  return last ? oneLine(describeError(last), 100) : "";
}
