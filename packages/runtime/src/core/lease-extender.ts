/**
 * How a heartbeat off the main thread reaches a backend (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease). A backend whose leases other
 * processes judge (PostgreSQL over a server, Redis) names a module that opens a connection of its own and
 * extends leases through it; a thread of the worker's process loads it and keeps the leases of its jobs alive
 * while the event loop is blocked. A backend whose leases live in this process (memory, PGlite, RabbitMQ's
 * deliveries) names none: nothing outside the process can take a job from it while its loop is blocked.
 */
export interface LeaseExtenderSpec {
  /** The file URL of a module exporting `openLeaseExtender(options): Promise<LeaseExtender>`. */
  readonly module: string;
  /** Plain data (structured-cloneable): what that module needs to connect. */
  readonly options: Readonly<Record<string, unknown>>;
}

export interface LeaseExtender {
  /** Pushes the leases like `QueueBackend.extendLeases`; returns the ids among them that were cancelled. */
  extend(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<string[]>;
  close(): Promise<void>;
}

/** The URL of a module next to `here` (import.meta.url): `.ts` when running from source, `.js` when built. */
export function siblingModule(here: string, name: string): string {
  const extension = here.endsWith(".ts") ? ".ts" : ".js";
  return new URL(`./${name}${extension}`, here).href;
}
