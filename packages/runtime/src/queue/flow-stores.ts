import { readFileSync } from "node:fs";
import { flowSummaryOfRow, stepError, type FlowDetail, type FlowStepInfo, type FlowSummary, type FlowTableRow } from "../core/backend/flows.js";
import type { FlowPlanJSON, JobFlow, ParentOutcome } from "../core/flow.js";
import type { FlowStore, StepOutcome, StepState } from "../core/flow-store.js";
import type { AttemptRun } from "../core/job-life.js";
import type { JobJSON } from "../core/job.js";
import type { SqlDatabase } from "../core/sql-port.js";
import { rewriteParts, type StoredRewriteResult } from "../core/stored-rewrite.js";

const sql = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const SQL = {
  create: sql("./sql/create-flow.sql"),
  complete: sql("./sql/complete-flow-step.sql"),
  die: sql("./sql/die-flow-step.sql"),
  revive: sql("./sql/revive-flow-steps.sql"),
  published: sql("./sql/published-flow-steps.sql"),
  takeUnpublished: sql("./sql/take-unpublished-flow-steps.sql"),
  recover: sql("./sql/recover-flow-step.sql"),
  step: sql("./sql/flow-step.sql"),
  parents: sql("./sql/flow-step-parents.sql"),
  get: sql("./sql/get-broker-flow.sql"),
  cancel: sql("./sql/cancel-broker-flow.sql"),
  cancelStep: sql("./sql/cancel-flow-step.sql"),
  prune: sql("./sql/prune-broker-flows.sql"),
  unpublished: sql("./sql/unpublished-flow-steps.sql"),
  rewrite: sql("./sql/rewrite-flow-steps.sql"),
  // The PostgreSQL queue's own statement: jfast_flows is the same table, read the same way.
  list: sql("../backends/postgres/sql/list-flows.sql"),
} as const;

/** Steps read and rewritten at a time by rewriteWaiting. */
const REWRITE_PAGE = 500;
/** Flows read at most per page of list, whatever its filters (list-flows.sql). */
const LIST_FLOWS_WINDOW = 1000;
/** A write that lost a deadlock (a cancel crossing a completion) wrote nothing: written again this many times at most. */
const DEADLOCK_RETRIES = 5;

type Timestamp = Date | string;

/** jfast_flows (migration 0024) and jfast_flow_steps (0025, timing 0035), shared by every process of the service. */
export function createSqlFlowStore(params: { db: SqlDatabase; queue: string }): FlowStore {
  const { db, queue } = params;
  return {
    kind: "sql",
    async create({ flow, leaseMs }) {
      const { steps, ...head } = flow;
      const rows = await db.query<{ created: string | number; job: JobJSON | null }>(SQL.create, [
        queue,
        JSON.stringify(head),
        JSON.stringify(steps.map((s) => ({ id: s.job.id, job: s.job, children: s.children, pending: s.pending }))),
        leaseMs,
      ]);
      return { created: Number(rows[0]?.created ?? 0) > 0, ready: jobsOf(rows) };
    },
    complete({ job, result, spawn, leaseMs, run }) {
      const parent = job.flow!;
      const spawned = spawn?.map((s) => ({ id: s.job.id, job: s.job, children: s.children, pending: s.pending, direct: s.job.flow?.after[parent.step] === job.id }));
      const value = result && "value" in result ? JSON.stringify(result.value) : null;
      const omitted = result && "omitted" in result ? result.omitted : null;
      return outcome(() => db.query(SQL.complete, [job.id, JSON.stringify(job), value, omitted, spawned ? JSON.stringify(spawned) : null, leaseMs, ...timing(run)]));
    },
    die({ job, leaseMs, run }) {
      return outcome(() => db.query(SQL.die, [job.id, JSON.stringify(job), leaseMs, ...timing(run)]));
    },
    async revive({ jobIds }) {
      if (jobIds.length > 0) await retryingDeadlocks(() => db.query(SQL.revive, [jobIds]));
    },
    async published({ jobIds }) {
      if (jobIds.length > 0) await db.query(SQL.published, [jobIds]);
    },
    async takeUnpublished({ limit, leaseMs }) {
      return jobsOf(await db.query<{ job: JobJSON }>(SQL.takeUnpublished, [queue, limit, leaseMs]));
    },
    async recover({ jobId, leaseMs }) {
      const rows = await db.query<{ state: StepState; job: JobJSON; child: JobJSON | null }>(SQL.recover, [jobId, leaseMs]);
      if (rows.length === 0) return null;
      return { state: rows[0]!.state, job: rows[0]!.job, ready: rows.flatMap((r) => (r.child ? [r.child] : [])) };
    },
    async step({ jobId }) {
      const [row] = await db.query<{ state: StepState; job: JobJSON; finished_at: Timestamp | null }>(SQL.step, [jobId]);
      return row ? { state: row.state, job: row.job, finishedAt: isoOrNull(row.finished_at) } : null;
    },
    async parentOutcomes({ jobIds }) {
      const outcomes = new Map<string, ParentOutcome>();
      if (jobIds.length === 0) return outcomes;
      type Row = { id: string; state: string; result: unknown; has_result: boolean; last_error: { class?: string; message?: string } | null };
      for (const row of await db.query<Row>(SQL.parents, [[...jobIds]])) {
        if (row.state === "completed") outcomes.set(row.id, { state: "completed", result: row.has_result ? row.result : undefined });
        else outcomes.set(row.id, { state: "dead", error: stepError(row.last_error) });
      }
      return outcomes;
    },
    async list(params) {
      const after = params.after === undefined ? null : Number(params.after);
      if (after !== null && !Number.isSafeInteger(after)) return { rows: [], next: null };
      type Row = FlowTableRow & { id: string | null; seq: string | number | null; edge_seq: string | number | null; scanned: string | number };
      const rows = await db.query<Row>(SQL.list, [queue, params.state ?? null, params.name ?? null, params.tenantId ?? null, params.limit + 1, after, LIST_FLOWS_WINDOW]);
      const page = rows.filter((row) => row.id !== null);
      const summary = rows[0];
      let next: string | null = null;
      if (page.length > params.limit) next = String(page[params.limit - 1]!.seq);
      else if (summary && Number(summary.scanned) >= LIST_FLOWS_WINDOW && summary.edge_seq !== null) next = String(summary.edge_seq);
      return { rows: page.slice(0, params.limit).map(flowSummaryOfRow), next };
    },
    async get({ id }) {
      type Row = FlowTableRow & {
        job_id: string | null;
        state: StepState;
        job: JobJSON;
        result: unknown;
        has_result: boolean;
        step_finished_at: Timestamp | null;
        step_started_at: Timestamp | null;
        step_duration_ms: number | string | null;
      };
      const rows = await db.query<Row>(SQL.get, [queue, id]);
      if (rows.length === 0) return null;
      const steps: Record<string, FlowStepInfo> = {};
      for (const row of rows) {
        if (row.job_id === null) continue;
        const flow = row.job.flow as JobFlow;
        const last = row.job.errors.at(-1);
        steps[flow.step] = {
          jobId: row.job_id,
          task: row.job.task,
          state: row.state,
          after: Object.keys(flow.after),
          attempts: row.job.attempts,
          ...(row.state === "completed" && row.has_result ? { result: row.result } : {}),
          ...(last && row.state !== "completed" ? { error: stepError(last) } : {}),
          finishedAt: isoOrNull(row.step_finished_at),
          ...(row.step_started_at !== null && row.step_duration_ms !== null
            ? { startedAt: new Date(row.step_started_at).toISOString(), durationMs: Number(row.step_duration_ms) }
            : {}),
        };
      }
      const detail: FlowDetail = { ...flowSummaryOfRow(rows[0]!), steps };
      return detail;
    },
    async prune({ select, limit }) {
      const params = "before" in select ? [queue, select.before.toISOString(), null, limit] : [queue, null, select.keepNewest, limit];
      const [row] = await db.query<{ flows: string | number; steps: string | number }>(SQL.prune, params);
      return Number(row?.steps ?? 0);
    },
    async rewriteWaiting({ rewrite }) {
      const skipped: StoredRewriteResult["skipped"] = [];
      let rewritten = 0;
      for (let after = ""; ; ) {
        const rows = await db.query<{ job_id: string; job: JobJSON }>(SQL.unpublished, [queue, after, REWRITE_PAGE]);
        const changed = rows.flatMap(({ job_id, job }) => {
          const parts = rewriteParts(job_id, { payload: job.payload, errors: job.errors }, rewrite, skipped);
          return parts ? [{ id: job_id, was: job, job: { ...job, payload: parts.payload, errors: parts.errors } }] : [];
        });
        if (changed.length > 0) rewritten += (await db.query(SQL.rewrite, [JSON.stringify(changed)])).length;
        if (rows.length < REWRITE_PAGE) return { rewritten, skipped };
        after = rows.at(-1)!.job_id;
      }
    },
    async cancelStep({ jobId }) {
      await db.query(SQL.cancelStep, [jobId]);
    },
    async cancel({ id }) {
      const [row] = await retryingDeadlocks(() => db.query<{ found: boolean; cancelled: string[] | null }>(SQL.cancel, [queue, id]));
      return row?.found ? { cancelled: row.cancelled ?? [] } : null;
    },
  };
}

async function outcome(write: () => Promise<Array<Record<string, unknown>>>): Promise<StepOutcome> {
  const rows = (await retryingDeadlocks(write)) as Array<{ written: string | number; job: JobJSON | null }>;
  return { written: Number(rows[0]?.written ?? 0) > 0, ready: jobsOf(rows) };
}

function jobsOf(rows: ReadonlyArray<{ job: JobJSON | null }>): JobJSON[] {
  return rows.flatMap((row) => (row.job ? [row.job] : []));
}

/** Runs `write` (one statement, all or nothing) again when it lost a deadlock, at most DEADLOCK_RETRIES times. */
async function retryingDeadlocks<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: unknown })?.code !== "40P01" || attempt > DEADLOCK_RETRIES) throw error;
    }
  }
}

/** A step's start (epoch ms) and run time as the outcome's statements take them; nulls without a record. */
function timing(run: AttemptRun | undefined): [number | null, number | null] {
  return run && typeof run.startedAt === "number" ? [run.startedAt, run.durationMs] : [null, null];
}

function isoOrNull(value: Timestamp | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}
