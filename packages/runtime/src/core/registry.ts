import type { DeclaredFlow } from "./define-flow.js";
import type { TaskSession } from "./task-session.js";
import { defineTask, type AnyTaskHandler } from "./define-task.js";
import type { ScheduleDeclaration, ScheduleOptions, Task, TaskDefinition, TaskHandler, TaskOptions } from "./task.js";
import { validateTaskName } from "./task.js";
import { ConfigError } from "../errors/jfast-error.js";
import { DEFAULT_QUEUE } from "./named-queue.js";

/** The tasks one app knows. `jfast.require("tasks")` returns it; `.task(...)` is the registry form. */
export class TaskRegistry {
  private readonly definitions = new Map<string, TaskDefinition>();
  private readonly scheduleDeclarations: ScheduleDeclaration[] = [];
  private readonly flowDeclarations: DeclaredFlow[] = [];
  /** Problems found while registering (a task not prefixed by its module); reported at start-up. */
  readonly warnings: string[] = [];

  register(definition: TaskDefinition): void {
    const existing = this.definitions.get(definition.name);
    if (existing && existing !== definition) {
      throw new ConfigError(`task "${definition.name}" is declared twice (${where(existing)} and ${where(definition)})`, {
        code: "TASK_DUPLICATE",
        hint: "task names are the wire contract: give each task one declaration",
        docs: "jfast docs tasks",
      });
    }
    if (definition.kind === "subscriber" && definition.name.endsWith("->")) {
      // subscribe() leaves the name open until discovery sees the export that holds it.
      throw new ConfigError(`a subscriber to "${definition.name.slice(0, -2)}" in ${where(definition)} has no name`, {
        code: "SUBSCRIBER_UNNAMED",
        hint: `export it from its module's tasks file (export const checkBudget = subscribe(...)), or pass { name: "<module>.<function>" }`,
        docs: "jfast docs events#subscribing",
      });
    }
    const invalid = validateTaskName(definition.name);
    if (invalid) {
      throw new ConfigError(invalid, { code: "TASK_NAME_INVALID", hint: "rename the task", docs: "jfast docs tasks#names" });
    }
    const owned = definition.kind === "subscriber" ? definition.name.split("->")[1]! : definition.name;
    if (definition.module && !owned.startsWith(`${definition.module}.`)) {
      this.warnings.push(
        `task "${definition.name}" is declared in modules/${definition.module} but not prefixed by it; rename it "${definition.module}.${definition.name.split(".").slice(1).join(".")}" so contracts can tell its owner`,
      );
    }
    this.definitions.set(definition.name, definition);
  }

  task<P = unknown>(name: string, options: TaskOptions<P> & { session: true }, handler: TaskHandler<P, TaskSession>): Task<P>;
  task<P = unknown>(name: string, handler: TaskHandler<P, undefined>): Task<P>;
  task<P = unknown>(name: string, options: TaskOptions<P>, handler: TaskHandler<P, undefined>): Task<P>;
  task<P>(name: string, a: TaskOptions<P> | AnyTaskHandler<P>, b?: AnyTaskHandler<P>): Task<P> {
    const definition = defineTask(name, a as TaskOptions<P> | TaskHandler<P>, b as TaskHandler<P> | undefined);
    this.register(definition as TaskDefinition);
    return definition;
  }

  /**
   * A schedule for a task declared elsewhere, or a second schedule of one task (give it its own `name`).
   * Checked when the scheduler starts: the cron or interval, the zone, and that the task exists.
   */
  schedule(task: string, options: ScheduleOptions): void {
    this.scheduleDeclarations.push({ task, options: { ...options } });
  }

  /** Schedules added with `schedule(...)`; those declared in task options are read from the tasks. */
  schedules(): ScheduleDeclaration[] {
    return [...this.scheduleDeclarations];
  }

  /** A flow declared with defineFlow in a tasks file: start-up refuses it on a queue that keeps no flows. */
  declareFlow(flow: DeclaredFlow): void {
    this.flowDeclarations.push(flow);
  }

  flows(): readonly DeclaredFlow[] {
    return this.flowDeclarations;
  }

  get(name: string): TaskDefinition | undefined {
    return this.definitions.get(name);
  }

  names(): string[] {
    return [...this.definitions.keys()].sort();
  }

  all(): TaskDefinition[] {
    return [...this.definitions.values()];
  }

  /** The named queue a task's jobs go to (its `queue` option, else `default`); `default` for a task not declared here. */
  queueOf(task: string): string {
    return this.definitions.get(task)?.options.queue ?? DEFAULT_QUEUE;
  }

  /**
   * Puts a task's options as its queue's settings resolve them (a queue's `fairness`, queue/queue-fairness.ts): the
   * definition is replaced by a copy with these options, the declared one left as it was.
   */
  resolveOptions(name: string, options: TaskOptions): void {
    const definition = this.definitions.get(name);
    if (definition) this.definitions.set(name, { ...definition, options });
  }

  /** The tasks whose jobs go to the named queue `queue` (docs/queues.md). */
  tasksIn(queue: string): TaskDefinition[] {
    return this.all().filter((definition) => (definition.options.queue ?? DEFAULT_QUEUE) === queue);
  }
}

function where(definition: TaskDefinition): string {
  return definition.file ?? (definition.module ? `modules/${definition.module}` : "code");
}
