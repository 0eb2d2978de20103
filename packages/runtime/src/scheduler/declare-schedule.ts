import { currentDeclarationScope } from "../core/declarations.js";
import type { ScheduleDeclaration, ScheduleOptions } from "../core/task.js";
import { createSchedule } from "./schedule.js";

/** A schedule declared at import time in a module's tasks file. */
export interface DeclaredSchedule extends ScheduleDeclaration {
  readonly kind: "schedule";
}

/**
 * Declares a schedule in a module's tasks file, for a task declared elsewhere or a second schedule of one
 * task (the module-level form of `tasks.schedule(...)`):
 *   export const weeklyReport = schedule("report.send", { cron: "0 8 * * mon", name: "report-weekly" });
 * Checked at once (a bad cron stops the import), registered when discovery imports the file, in the API and
 * in `jfast worker` alike. Export it: a tasks file imported before discovery still has its exports read.
 */
export function schedule(task: string, options: ScheduleOptions): DeclaredSchedule {
  createSchedule(task, options);
  const declaration: DeclaredSchedule = Object.freeze({ kind: "schedule", task, options: Object.freeze({ ...options }) });
  const scope = currentDeclarationScope();
  if (scope) store.set(scope.file, [...(store.get(scope.file) ?? []), declaration]);
  return declaration;
}

/** What a discovered tasks file declared: recorded while it was imported, plus its exported declarations. */
export function schedulesOf(module: { file: string; exports: Record<string, unknown> }): DeclaredSchedule[] {
  const recorded = store.get(module.file) ?? [];
  const exported = Object.values(module.exports).filter(
    (value): value is DeclaredSchedule => (value as { kind?: unknown } | null)?.kind === "schedule" && !recorded.includes(value as DeclaredSchedule),
  );
  return [...recorded, ...exported];
}

// Kept on globalThis like task declarations: ES modules run once per process, and a second app built in the
// same process (tests, the CLI) must find what the first import declared.
const KEY = Symbol.for("jfast.schedule-declarations");
const store: Map<string, DeclaredSchedule[]> =
  ((globalThis as Record<symbol, unknown>)[KEY] as Map<string, DeclaredSchedule[]> | undefined) ?? new Map();
(globalThis as Record<symbol, unknown>)[KEY] = store;
