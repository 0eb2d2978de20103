import type { FlowListView } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { requireSupported } from "../flows-access.js";
import { ago, formatTable } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { cliActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

const STATES = ["running", "completed", "failed", "cancelled"] as const;
type State = (typeof STATES)[number];

export default defineCommand({
  name: "flows list",
  summary: "list flows newest first, with their state and how many steps completed",
  description: `
Lists one page of the service's flows, newest first (each named queue in turn, default first), as the admin API's
flows.list does: id, name, state (running, completed, failed, cancelled), steps completed of total, dead steps,
when it was created and finished. A page reads a bounded window of flows, so with a filter it can be shorter
than --limit while more follow: the next page is printed as a cursor to pass back with --after. --json prints
{ items, nextCursor }. A RabbitMQ queue without the database plugin keeps no flows:
NOT_SUPPORTED. See jfast docs flows and
jfast docs cli#jfast-flows.`,
  flags: {
    state: { type: "string", placeholder: STATES.join("|"), description: "only flows in this state" },
    name: { type: "string", placeholder: "NAME", description: "only flows of this name" },
    tenant: { type: "string", placeholder: "TENANT", description: "only flows of this tenant" },
    queue: { type: "string", placeholder: "NAME", description: "only this named queue's flows (default: every queue of the service)" },
    limit: { type: "integer", min: 1, max: 100, default: 50, placeholder: "N", description: "flows per page at most" },
    after: { type: "string", placeholder: "CURSOR", description: "continue after the cursor the previous page printed" },
    json: { type: "boolean", description: "print { items, nextCursor } as JSON" },
    root: ROOT_FLAG,
  },
  examples: ["jfast flows list", "jfast flows list --state failed", "jfast flows list --name order.fulfil --json"],
  docs: "jfast docs flows",
  async run({ flags, io }) {
    const state = flags.state as State | undefined;
    if (state !== undefined && !STATES.includes(state)) throw new UsageError(`--state is one of ${STATES.join(", ")}, not "${flags.state}"`);
    const page = await withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      const repairs = await jfast.repairs(cliActor());
      return requireSupported(await repairs.listFlows({ state, name: flags.name, tenant: flags.tenant, queue: flags.queue, limit: flags.limit, after: flags.after }));
    });
    io.out(flags.json ? `${JSON.stringify({ items: page.items, nextCursor: page.nextCursor }, null, 2)}\n` : formatFlows(page));
    return 0;
  },
});

function formatFlows(page: FlowListView, now: number = Date.now()): string {
  const more = page.nextCursor === null ? "" : `next page: --after ${page.nextCursor}\n`;
  if (page.items.length === 0) return `no flows in this page\n${more}`;
  const queues = new Set(page.items.map((f) => f.queue)).size > 1 || page.items.some((f) => f.queue !== "default");
  const rows = page.items.map((f) => [
    f.id,
    f.name ?? (f.kind === "batch" ? "(batch)" : ""),
    f.state,
    `${f.completed}/${f.total}`,
    String(f.dead),
    ago(f.createdAt, now),
    f.finishedAt ? ago(f.finishedAt, now) : "",
    ...(queues ? [f.queue] : []),
  ]);
  return `${formatTable(["ID", "NAME", "STATE", "STEPS", "DEAD", "CREATED", "FINISHED", ...(queues ? ["QUEUE"] : [])], rows)}${more}`;
}
