import { ListOrder, ListState, type QueueBackend } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { CliError } from "../errors.js";
import { formatTable, oneLine } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { resolveRoot } from "../service.js";

/** What a schema says about one payload: the same Standard Schema call the enqueue and the worker make. */
interface SchemaLike {
  "~standard": { validate(value: unknown): { issues?: ReadonlyArray<{ message: string; path?: ReadonlyArray<unknown> }> } | Promise<{ issues?: ReadonlyArray<{ message: string; path?: ReadonlyArray<unknown> }> }> };
}

interface StateCount {
  checked: number;
  refused: number;
}

/** One task's waiting jobs against its current schema: `jfast jobs check-payloads --json` prints a list of these. */
export interface PayloadCheck {
  task: string;
  ready: StateCount;
  scheduled: StateCount;
  /** Up to 5 refused jobs, each with its bad fields. */
  examples: Array<{ id: string; state: "ready" | "scheduled"; issues: Array<{ path: string; message: string }> }>;
}

const PAGE = 500;
const EXAMPLES = 5;

export default defineCommand({
  name: "jobs check-payloads",
  summary: "count, per task, the waiting and scheduled jobs whose payload the task's current schema would refuse",
  description: `
Reads every ready and scheduled job of each task declared with a payload schema (task(name, { schema }, …)) and
checks its payload against the schema as the modules under <root> declare it now: what the worker would do before
running it. Run it with the new code before a deploy: a refused job would go to the dead letters at once instead of
running. Tasks without a schema are not checked. Exit code 0 when every payload fits, 1 when any is refused.
--json prints { tasks: [{ task, ready: { checked, refused }, scheduled: {…}, examples }], refused }.`,
  flags: {
    task: { type: "string", placeholder: "TASK", description: "only this task" },
    json: { type: "boolean", description: "print the counts as JSON" },
    root: ROOT_FLAG,
  },
  examples: ["jfast jobs check-payloads", "jfast jobs check-payloads --task billing.charge --json"],
  docs: "jfast docs cli#jfast-jobs-check-payloads",
  async run({ flags, io }) {
    const checks = await withQueue(resolveRoot(flags.root, io.cwd), async (backend, jfast) => {
      const tasks = jfast.tasks
        .all()
        .filter((t) => t.options.schema !== undefined && (flags.task === undefined || t.name === flags.task))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      if (flags.task !== undefined && !jfast.tasks.get(flags.task)) {
        throw new CliError(`this service declares no task named "${flags.task}"`, { code: "TASK_UNKNOWN", hint: "jfast contracts show lists the tasks of each module", docs: "jfast docs cli#jfast-jobs-check-payloads" });
      }
      for (const state of [ListState.ready, ListState.scheduled]) {
        if (!backend.capabilities.listableStates.includes(state)) {
          throw new CliError(`the ${backend.kind} backend cannot list ${state} jobs, so their payloads cannot be read without taking them from the queue`, {
            code: "NOT_SUPPORTED",
            hint: "check payloads on a backend that lists waiting jobs (PostgreSQL, Redis); on RabbitMQ a job that no longer fits goes to the dead letters when claimed",
            docs: "jfast docs cli#jfast-jobs-check-payloads",
          });
        }
      }
      const out: PayloadCheck[] = [];
      for (const task of tasks) out.push(await checkTask(backend, task.name, task.options.schema as unknown as SchemaLike));
      return out;
    });
    const refused = checks.reduce((sum, c) => sum + c.ready.refused + c.scheduled.refused, 0);
    io.out(flags.json ? `${JSON.stringify({ tasks: checks, refused }, null, 2)}\n` : format(checks, refused));
    return refused > 0 ? 1 : 0;
  },
});

async function checkTask(backend: QueueBackend, task: string, schema: SchemaLike): Promise<PayloadCheck> {
  const check: PayloadCheck = { task, ready: { checked: 0, refused: 0 }, scheduled: { checked: 0, refused: 0 }, examples: [] };
  for (const state of [ListState.ready, ListState.scheduled] as const) {
    let after: string | undefined;
    do {
      const page = await backend.listJobs({ state, order: ListOrder.oldest, task, limit: PAGE, ...(after === undefined ? {} : { after }) });
      for (const row of page.rows) {
        check[state].checked++;
        const result = await schema["~standard"].validate(row.job.payload);
        if (!result.issues) continue;
        check[state].refused++;
        if (check.examples.length < EXAMPLES) {
          check.examples.push({ id: row.job.id, state, issues: result.issues.map((i) => ({ path: issuePath(i.path), message: i.message })) });
        }
      }
      after = page.next ?? undefined;
    } while (after !== undefined);
  }
  return check;
}

function issuePath(path: ReadonlyArray<unknown> | undefined): string {
  if (!path || path.length === 0) return "(payload)";
  return path.map((p) => String(typeof p === "object" && p !== null && "key" in p ? (p as { key: unknown }).key : p)).join(".");
}

function format(checks: PayloadCheck[], refused: number): string {
  if (checks.length === 0) return "no task of this service declares a payload schema: nothing to check\n";
  const rows = checks.map((c) => {
    const first = c.examples[0];
    return [c.task, String(c.ready.checked), String(c.ready.refused), String(c.scheduled.checked), String(c.scheduled.refused), first ? oneLine(`${first.id}: ${first.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, 90) : ""];
  });
  const verdict = refused === 0 ? "every waiting payload fits its task's schema\n" : `${refused} waiting job${refused === 1 ? "" : "s"} would be refused by the current schema and go to the dead letters when claimed\n`;
  return `${formatTable(["TASK", "READY", "REFUSED", "SCHEDULED", "REFUSED", "FIRST REFUSED"], rows)}${verdict}`;
}
