import type { PausedTask, PausedTaskSet, PauseStore } from "../core/pause.js";
import type { Logger } from "../observability/logger.js";

/** How often each process re-reads the paused tasks: a pause or resume anywhere takes effect within this. */
export const PAUSE_REFRESH_MS = 1000;

/**
 * The paused tasks as this process knows them, shared by its workers (core/pause.ts). Re-read from the store
 * every PAUSE_REFRESH_MS; a pause or resume made through this object applies here at once. When a task is
 * resumed (here or, seen at a refresh, elsewhere) idle workers are woken so its jobs start without waiting for
 * their poll interval. A store that cannot be read keeps the last known set and logs once.
 */
export class PausedTasks implements PausedTaskSet {
  readonly store: PauseStore;
  private readonly logger: Logger;
  private readonly refreshMs: number;
  private current = new Map<string, PausedTask>();
  private sorted: readonly string[] = [];
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private failing = false;
  /**
   * Pauses and resumes made through this object, counted once the store holds them. A refresh whose read began
   * before one of them may have read the store before it: what it read is older than what is applied, and is dropped.
   */
  private changes = 0;

  constructor(params: { store: PauseStore; logger: Logger; refreshMs?: number }) {
    this.store = params.store;
    this.logger = params.logger;
    this.refreshMs = params.refreshMs ?? PAUSE_REFRESH_MS;
  }

  get size(): number {
    return this.current.size;
  }

  has(task: string): boolean {
    return this.current.has(task);
  }

  names(): readonly string[] {
    return this.sorted;
  }

  list(): PausedTask[] {
    return [...this.current.values()];
  }

  onResume(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer ??= setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    const seen = this.changes;
    try {
      const entries = await this.store.list();
      // A pause or resume made here while the read was in flight: the next refresh reads past it.
      if (seen === this.changes) this.apply(entries);
      if (this.failing) this.logger.info("reading paused tasks again");
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn("cannot read the paused tasks; keeping the last known ones", { error, store: this.store.kind });
      this.failing = true;
    }
  }

  async pause(params: { task: string; by: string | null }): Promise<PausedTask> {
    const entry = await this.store.pause(params);
    this.changes++;
    this.apply([...this.current.values()].filter((p) => p.task !== entry.task).concat(entry));
    return entry;
  }

  async resume(params: { task: string }): Promise<boolean> {
    const was = await this.store.resume(params);
    this.changes++;
    this.apply([...this.current.values()].filter((p) => p.task !== params.task));
    return was;
  }

  private apply(entries: PausedTask[]): void {
    const resumed = [...this.current.keys()].some((task) => !entries.some((e) => e.task === task));
    this.current = new Map(entries.map((e) => [e.task, e]));
    this.sorted = [...this.current.keys()].sort();
    if (resumed) for (const listener of [...this.listeners]) listener();
  }
}
