import { readFileSync } from "node:fs";
import type { PausedTask, PauseStore } from "../core/pause.js";
import type { SqlExecutor } from "../core/sql-port.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = { list: sql("list-paused"), pause: sql("pause-task"), resume: sql("resume-task") } as const;

interface PausedRow {
  task: string;
  paused_at: Date | string;
  paused_by: string | null;
}

/** jfast_paused_tasks (migration 0010), shared by every process of the service whatever its queue backend. */
export function createSqlPauseStore(params: { db: SqlExecutor; queue: string }): PauseStore {
  const { db, queue } = params;
  const toTask = (row: PausedRow): PausedTask => ({ task: row.task, pausedAt: new Date(row.paused_at).toISOString(), pausedBy: row.paused_by });
  return {
    kind: "sql",
    async list() {
      return (await db.query<PausedRow>(SQL.list, [queue])).map(toTask);
    },
    async pause({ task, by }) {
      const [row] = await db.query<PausedRow>(SQL.pause, [queue, task, by]);
      return toTask(row!);
    },
    async resume({ task }) {
      return (await db.query(SQL.resume, [queue, task])).length > 0;
    },
  };
}

/** For the memory queue, which lives in one process. */
export function createMemoryPauseStore(): PauseStore {
  const paused = new Map<string, PausedTask>();
  return {
    kind: "memory",
    async list() {
      return [...paused.values()].sort((a, b) => a.task.localeCompare(b.task));
    },
    async pause({ task, by }) {
      const existing = paused.get(task);
      if (existing) return existing;
      const entry = { task, pausedAt: new Date().toISOString(), pausedBy: by };
      paused.set(task, entry);
      return entry;
    },
    async resume({ task }) {
      return paused.delete(task);
    },
  };
}
