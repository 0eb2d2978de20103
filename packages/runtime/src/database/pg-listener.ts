import type pg from "pg";
import type { Logger } from "../observability/logger.js";

type Callback = (payload: string) => void;

/**
 * One dedicated connection per process for LISTEN: a pooled connection cannot hold a LISTEN (it goes back
 * to the pool and another query may run on it; the pool may close it when idle).
 *
 * If the connection drops, it reconnects with backoff and listens again. Notifications sent while it was
 * down are lost (PostgreSQL keeps none for a session that is gone), so after every reconnect each
 * subscriber is called once with an empty payload: "something may have happened, look".
 */
export class PgListener {
  private readonly channels = new Map<string, Set<Callback>>();
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly params: {
      createClient: () => pg.Client;
      logger: Logger;
    },
  ) {}

  async subscribe(channel: string, callback: Callback): Promise<() => Promise<void>> {
    assertChannel(channel);
    let set = this.channels.get(channel);
    const first = !set;
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(callback);
    try {
      const client = await this.connect();
      if (first) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      set.delete(callback);
      if (set.size === 0) this.channels.delete(channel);
      throw error;
    }
    return async () => {
      const current = this.channels.get(channel);
      if (!current?.delete(callback) || current.size > 0) return;
      this.channels.delete(channel);
      await this.client?.query(`UNLISTEN ${channel}`).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.channels.clear();
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = this.params.createClient();
    // Without a listener an 'error' event would crash the process; a dropped LISTEN connection is routine.
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, null));
    client.on("notification", (message) => {
      for (const callback of this.channels.get(message.channel) ?? []) callback(message.payload ?? "");
    });
    await client.connect();
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error("the listener was closed");
    }
    for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
    this.client = client;
    this.failures = 0;
    return client;
  }

  private lost(client: pg.Client, error: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.closed || this.channels.size === 0) return;
    this.params.logger.warn("the LISTEN connection dropped; reconnecting (workers fall back to polling meanwhile)", {
      error: error ?? undefined,
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = Math.min(5000, 100 * 2 ** Math.min(this.failures, 6));
    this.reconnectTimer = setTimeout(async () => {
      this.reconnectTimer = null;
      try {
        await this.connect();
        // What was notified while we were away is gone: wake everyone to look for themselves.
        for (const set of this.channels.values()) for (const callback of set) callback("");
      } catch {
        this.failures++;
        this.scheduleReconnect();
      }
    }, delay);
    this.reconnectTimer.unref();
  }
}

/** Channels are interpolated into LISTEN, so they are restricted to plain lower-case identifiers. */
function assertChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid notification channel "${channel}"`);
}
