import { readFileSync } from "node:fs";
import type { SqlDatabase } from "../../core/sql-port.js";
import { NotSupportedError } from "../../errors/jfast-error.js";
import type { EnqueueJobs, EnqueueJobsWithin, ScheduleStore, StoredSchedule, StoredScheduleSpec } from "./schedule-store.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = {
  lastTicks: sql("last-ticks"),
  lock: sql("lock-schedule"),
  claim: sql("claim-tick"),
  release: sql("release-tick"),
  prune: sql("prune-claims"),
  tickClaims: sql("tick-claims"),
  schedules: sql("schedules"),
  insertSchedule: sql("insert-schedule"),
  upsertSchedule: sql("upsert-schedule"),
  deleteSchedule: sql("delete-schedule"),
} as const;

interface ScheduleRow {
  name: string;
  spec: StoredScheduleSpec | null;
  paused: boolean;
  since_ms: number;
  updated_ms: number;
  updated_by: string | null;
}

/**
 * Claims in jfast_schedules (migration 0004). With `enqueueWithin` (the PostgreSQL queue in the same
 * database) the claim and the job commit in one transaction: either both exist or neither does. Otherwise
 * the claim commits first and the job is enqueued after it; a failed enqueue deletes the claim, and a
 * process that dies between the two loses that tick (the job id would have made a retry harmless).
 */
export function createPostgresScheduleStore(params: {
  db: SqlDatabase;
  enqueue: EnqueueJobs;
  enqueueWithin?: EnqueueJobsWithin | undefined;
}): ScheduleStore {
  const { db, enqueue, enqueueWithin } = params;
  return {
    kind: "postgres",
    async lastTicks({ names }) {
      const rows = await db.query<{ name: string; tick_ms: number }>(SQL.lastTicks, [names]);
      return new Map(rows.map((r) => [r.name, Number(r.tick_ms)]));
    },
    async serverTime() {
      const [row] = await db.query<{ now_ms: number | string }>("SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now_ms");
      return Number(row?.now_ms);
    },
    async claim({ name, tick, job }) {
      const at = new Date(tick).toISOString();
      if (enqueueWithin) {
        return db.transaction(async (tx) => {
          await tx.query(SQL.lock, [name]);
          const won = (await tx.query(SQL.claim, [name, at])).length === 1;
          if (won) await enqueueWithin(tx, [job]);
          return won;
        });
      }
      const won = await db.transaction(async (tx) => {
        await tx.query(SQL.lock, [name]);
        return (await tx.query(SQL.claim, [name, at])).length === 1;
      });
      if (!won) return false;
      try {
        await enqueue([job]);
      } catch (error) {
        // If this delete fails too, the tick stays claimed and is lost; the enqueue error is the one to report.
        await db.query(SQL.release, [name, at]).catch(() => undefined);
        throw error;
      }
      return true;
    },
    async tickClaims({ name, from, to }) {
      const [row] = await db.query<{ claimed: number; first_ms: number | null; before: boolean }>(SQL.tickClaims, [
        name,
        new Date(from).toISOString(),
        new Date(to).toISOString(),
      ]);
      return { claimed: Number(row?.claimed ?? 0), first: row?.first_ms === null || row?.first_ms === undefined ? null : Number(row.first_ms), before: row?.before === true };
    },
    async prune({ before }) {
      const [row] = await db.query<{ deleted: number }>(SQL.prune, [new Date(before).toISOString()]);
      return Number(row?.deleted ?? 0);
    },
    async schedules() {
      let rows: ScheduleRow[];
      try {
        rows = await db.query<ScheduleRow>(SQL.schedules);
      } catch (error) {
        // A database without migration 0032 has no schedule made at run time, and the declared ones keep running.
        if (missingTable(error)) return [];
        throw error;
      }
      return rows.map((r): StoredSchedule => ({
        name: r.name,
        spec: r.spec,
        paused: r.paused,
        since: Number(r.since_ms),
        updatedAt: Number(r.updated_ms),
        updatedBy: r.updated_by,
      }));
    },
    async saveSchedule({ schedule, create }) {
      const params = [
        schedule.name,
        schedule.spec === null ? null : JSON.stringify(schedule.spec),
        schedule.paused,
        new Date(schedule.since).toISOString(),
        new Date(schedule.updatedAt).toISOString(),
        schedule.updatedBy,
      ];
      try {
        return (await db.query(create ? SQL.insertSchedule : SQL.upsertSchedule, params)).length === 1;
      } catch (error) {
        if (missingTable(error)) {
          throw new NotSupportedError("this database has no table for schedules made at run time (jfast_schedule_definitions)", {
            hint: "start a process of this version once so that it applies migration 0032",
            docs: "jfast docs scheduler#at-run-time",
            cause: error,
          });
        }
        throw error;
      }
    },
    async deleteSchedule({ name }) {
      try {
        return (await db.query(SQL.deleteSchedule, [name])).length === 1;
      } catch (error) {
        if (missingTable(error)) return false;
        throw error;
      }
    },
    // The connection belongs to the database provider, which closes it.
    async close() {},
  };
}

function missingTable(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "42P01";
}
