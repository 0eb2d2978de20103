import type { Redis } from "ioredis";

export type WaitOutcome = "woken" | "timeout" | "aborted";

interface Pending {
  /** When this wait would end on its own (ms). */
  end: number;
  connection: Redis;
  clientId: Promise<number | null>;
  settle(outcome: WaitOutcome): void;
}

/**
 * How an idle worker blocks: `BLMOVE <ready> <ready> RIGHT RIGHT <timeout>` on a connection of its own.
 *
 * Source and destination are the same list and the same end, so Redis pops the oldest id and pushes it straight
 * back where it was: the list is unchanged, and the command is a pure "block until the ready list is not
 * empty". Nothing leaves the ready list while waiting, which is the point:
 *  - the worker's contract is claim() then waitForWork(); the wait can be aborted (shutdown) or time out at any
 *    moment, and the process can die in the middle of it, without a job being in flight anywhere;
 *  - the real move into the worker's processing list happens in claim.lua, atomically with counting the attempt
 *    and recording the lease, so there is no window in which a job sits in a processing list without a lease.
 * The price: every idle process blocked on the list wakes for each push and races to claim (like LISTEN/NOTIFY);
 * the losers find nothing and block again.
 *
 * Jobs that become claimable later (delays, retry backoff) do not touch the ready list until promoted, so the
 * caller blocks no longer than the earliest due time it knows of, and `interrupt(dueMs)` ends the waits that
 * would sleep past a job scheduled since (announced on the queue's pub/sub channel). Ending a blocked command
 * early is CLIENT UNBLOCK from the command connection, so connections are reused, never dropped.
 *
 * On Redis Cluster the wait connections are plain connections to the node serving the queue's slot (`route`
 * names it): CLIENT ID and CLIENT UNBLOCK only mean something on one node. After a failover the slot has a new
 * node; an idle connection to the old one is dropped, not reused.
 */
export class ReadyWaiter {
  private readonly idle: Redis[] = [];
  /** Each open connection and the route it was opened for. */
  private readonly open = new Map<Redis, string>();
  private readonly pending = new Set<Pending>();
  private closed = false;

  constructor(
    private readonly params: {
      connect: () => Redis;
      readyKey: string;
      /** CLIENT UNBLOCK <id>, sent on another connection to the node `blocked` is connected to. */
      unblock: (clientId: number, blocked: Redis) => Promise<unknown>;
      /** Where a new connection would go now (Cluster: the node serving the slot); unset: always the same place. */
      route?: () => string;
    },
  ) {}

  async wait(params: { timeoutMs: number; signal: AbortSignal }): Promise<WaitOutcome> {
    const { timeoutMs, signal } = params;
    if (this.closed || signal.aborted) return "aborted";
    if (timeoutMs < 10) return "timeout";
    const connection = this.take();
    const key = this.params.readyKey;
    // Sent back to back on the same connection: the id names exactly the connection the BLMOVE blocks.
    const clientId = connection.client("ID").then(Number, () => null);
    // Redis takes fractional seconds and answers nil at the timeout.
    const command = connection.blmove(key, key, "RIGHT", "RIGHT", (timeoutMs / 1000).toFixed(3));
    command.then(
      () => this.release(connection),
      () => this.release(connection),
    );

    let settle!: (outcome: WaitOutcome) => void;
    let fail!: (error: unknown) => void;
    const settled = new Promise<WaitOutcome>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const entry: Pending = { end: Date.now() + timeoutMs, connection, clientId, settle };
    this.pending.add(entry);
    command.then(
      (value) => settle(value === null ? "timeout" : "woken"),
      (error: unknown) => (this.closed || signal.aborted ? settle("aborted") : fail(error)),
    );
    const onAbort = () => this.cut(entry, "aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    // A safety net for when Redis is unreachable and the command sits in the client's offline queue.
    const timer = setTimeout(() => settle("timeout"), timeoutMs + 2000);
    try {
      return await settled;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      this.pending.delete(entry);
    }
  }

  /** Ends every wait that would otherwise sleep past `dueMs`: they re-plan around the newly scheduled job. */
  interrupt(dueMs: number): void {
    for (const entry of [...this.pending]) {
      if (entry.end > dueMs) this.cut(entry, "woken");
    }
  }

  close(): void {
    this.closed = true;
    for (const entry of [...this.pending]) entry.settle("aborted");
    for (const connection of [...this.open.keys()]) connection.disconnect(false);
    this.open.clear();
    this.idle.length = 0;
  }

  private cut(entry: Pending, outcome: WaitOutcome): void {
    entry.settle(outcome);
    this.pending.delete(entry);
    void entry.clientId.then((id) => (id === null || this.closed ? undefined : this.params.unblock(id, entry.connection))).catch(() => undefined);
  }

  /** An idle connection on the current route, or a new one; idle connections to a node no longer serving the slot go. */
  private take(): Redis {
    const route = this.params.route?.() ?? "";
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      if (this.open.get(connection) === route) return connection;
      this.open.delete(connection);
      connection.disconnect(false);
    }
    const connection = this.params.connect();
    this.open.set(connection, route);
    return connection;
  }

  /** The connection is free again only once Redis answered, whoever stopped waiting first. */
  private release(connection: Redis): void {
    if (!this.closed && this.open.has(connection)) this.idle.push(connection);
  }
}
