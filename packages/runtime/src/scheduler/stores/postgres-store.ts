import { readFileSync } from "node:fs";
import type { SqlDatabase } from "../../core/sql-port.js";
import type { EnqueueJobs, EnqueueJobsWithin, ScheduleStore } from "./schedule-store.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = {
  lastTicks: sql("last-ticks"),
  lock: sql("lock-schedule"),
  claim: sql("claim-tick"),
  release: sql("release-tick"),
  prune: sql("prune-claims"),
  tickClaims: sql("tick-claims"),
} as const;

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
    // The connection belongs to the database provider, which closes it.
    async close() {},
  };
}
