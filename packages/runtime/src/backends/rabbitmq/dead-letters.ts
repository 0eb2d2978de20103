import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Channel, GetMessage } from "amqplib";
import type { JobJSON } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import { decodeCursor, encodeCursor, matchesListing } from "../../core/job-listing.js";
import type { PruneSelection } from "../../core/retention.js";
import { ListOrder, type DeadJob, type JobInfo, type JobListing, type ListJobsParams, type RetryDeadParams } from "../../core/queue-backend.js";
import type { BrokerConnection, Publication } from "./connection.js";
import { decodeJob, encodeJob, numberHeader, unreadableJob } from "./message.js";
import { Header, type QueueNames } from "./names.js";
import { rewriteParts, type StoredParts, type StoredRewriteResult } from "../../core/stored-rewrite.js";

/** One dead letter read from `<queue>.dead`, held unacked on the browsing channel. */
export interface DeadEntry {
  message: GetMessage;
  json: JobJSON;
  diedAt: number;
  /** Position in the queue when read; breaks ties between equal death times (later is newer). */
  position: number;
}

/**
 * Dead letters live in the durable queue `<queue>.dead`, which no worker consumes. A queue cannot be read
 * without taking messages out, so every operation *browses*: on a channel of its own it takes every message
 * with basic.get without acking, decides, acks what it removes (after the replacement is confirmed, for a
 * retry), then nacks the rest back with requeue and closes the channel.
 *
 * Nothing is lost: a message taken but not acked belongs to the browsing channel, and the broker puts it back
 * when that channel or its connection closes, even if this process dies mid-browse. RabbitMQ puts requeued
 * messages back in their original position, and the list is sorted by the time of death recorded in a header
 * anyway, so the order operators see is newest death first whatever the queue order.
 *
 * Browses in one process take turns. While one runs, its messages are invisible to others (a second process
 * listing at that instant sees fewer) and the dead count in depths() dips; both recover when it ends.
 * Cost: one round trip per dead letter, and every dead letter is read to sort them.
 */
/** How long a browse waits for the dead letters it put back to be counted again, and how often it looks. */
const PUT_BACK_WAIT_MS = 2_000;
const PUT_BACK_POLL_MS = 10;

export class DeadLetters {
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly connection: BrokerConnection,
    private readonly names: QueueNames,
  ) {}

  async list(params: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return this.browse("list dead letters", async (entries) =>
      newestFirst(entries)
        .slice(params.offset ?? 0, (params.offset ?? 0) + params.limit)
        .map(toDeadJob),
    );
  }

  /** A keyset page by (time of death, id), filtered; every dead letter is browsed, as for list(). */
  async page(params: ListJobsParams): Promise<JobListing> {
    return this.browse("list dead letters", async (entries) => {
      const after = decodeCursor(params, 2) as [number, string] | null;
      const sign = params.order === ListOrder.oldest ? 1 : -1;
      const compare = (a: readonly [number, string], b: readonly [number, string]) => sign * (a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      const rows = entries
        .map((e) => ({ e, key: [e.diedAt, e.json.id] as const }))
        .filter(({ e, key }) => matchesListing(toInfo(e), params) && (after === null || compare(key, after) > 0))
        .sort((a, b) => compare(a.key, b.key));
      const page = rows.slice(0, params.limit);
      const last = page.at(-1);
      return { rows: page.map(({ e }) => toInfo(e)), next: rows.length > params.limit && last ? encodeCursor(params, last.key) : null, exact: true };
    });
  }

  async find(id: string): Promise<DeadEntry | null> {
    return this.browse("read a dead letter", async (entries) => newestFirst(entries).find((e) => e.json.id === id) ?? null);
  }

  /** Requeues with attempts reset: publishes a fresh copy to the work queue, then acks the dead one. */
  async retry(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    return this.browse("retry dead letters", async (entries, ack) => {
      const { found, missing } = select(entries, params);
      const now = new Date().toISOString();
      const publications: Publication[] = found.map((e) => ({
        exchange: "",
        routingKey: this.names.work,
        message: encodeJob({ ...e.json, attempts: 0, availableAt: now }),
      }));
      await this.connection.publish("retry dead letters", publications);
      for (const e of found) ack(e);
      return { retried: unique(found.map((e) => e.json.id)), missing };
    });
  }

  /**
   * `jfast keys rotate`: each dead letter `rewrite` changes is published again to the dead queue with its time of
   * death, and the original acked once the broker confirmed the copy.
   */
  async rewrite(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<{ dead: number; skipped: StoredRewriteResult["skipped"] }> {
    return this.browse("rewrite dead letters", async (entries, ack) => {
      const skipped: StoredRewriteResult["skipped"] = [];
      const changed: Array<{ entry: DeadEntry; json: JobJSON }> = [];
      for (const entry of entries) {
        const next = rewriteParts(entry.json.id, { payload: entry.json.payload, errors: entry.json.errors }, params.rewrite, skipped);
        if (next) changed.push({ entry, json: { ...entry.json, payload: next.payload, errors: next.errors } });
      }
      await this.connection.publish(
        "rewrite dead letters",
        changed.map(({ entry, json }) => ({ exchange: "", routingKey: this.names.dead, message: encodeJob(json, { diedAt: entry.diedAt }) })),
      );
      for (const { entry } of changed) ack(entry);
      return { dead: changed.length, skipped };
    });
  }

  async discard(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    return this.browse("discard dead letters", async (entries, ack) => {
      const { found, missing } = select(entries, params);
      for (const e of found) ack(e);
      return { discarded: unique(found.map((e) => e.json.id)), missing };
    });
  }

  /**
   * Deletes up to `limit` of the oldest dead letters: the queue holds them in order of death, oldest at its head,
   * so this reads from the head and stops at the first one to keep (died at or after `before`, or among the newest
   * `keepNewest` by the count the first read reports). Dead letters retried meanwhile are simply not there.
   */
  async prune(params: { select: PruneSelection; limit: number }): Promise<number> {
    const { select, limit } = params;
    return this.inTurn("prune dead letters", async (channel) => {
      let pruned = 0;
      let excess = Number.POSITIVE_INFINITY;
      while (pruned < limit) {
        const message = await channel.get(this.names.dead, { noAck: false });
        if (message === false) break;
        if ("keepNewest" in select) {
          if (excess === Number.POSITIVE_INFINITY) excess = message.fields.messageCount + 1 - select.keepNewest;
          if (pruned >= excess) break;
        } else if (this.entry(message, 0).diedAt >= select.before.getTime()) {
          break;
        }
        channel.ack(message);
        pruned++;
      }
      return pruned;
    });
  }

  private browse<T>(operation: string, use: (entries: DeadEntry[], ack: (entry: DeadEntry) => void) => Promise<T>): Promise<T> {
    return this.inTurn(operation, async (channel) => {
      const entries: DeadEntry[] = [];
      // Stop at the count the first get reports, so dead letters arriving meanwhile cannot keep us reading.
      let expected = Number.POSITIVE_INFINITY;
      while (entries.length < expected) {
        const message = await channel.get(this.names.dead, { noAck: false });
        if (message === false) break;
        if (expected === Number.POSITIVE_INFINITY) expected = message.fields.messageCount + 1;
        entries.push(this.entry(message, entries.length));
      }
      let acked = 0;
      const result = await use(entries, (entry) => {
        channel.ack(entry.message);
        acked++;
      });
      await this.putBack(channel, entries.length - acked);
      return result;
    });
  }

  /**
   * Nacks what the browse took and kept, and waits until the dead queue counts them again (at most
   * PUT_BACK_WAIT_MS). A quorum queue applies a requeue through its log after the nack is sent: without the wait, the
   * next browse, a moment later, could find the queue empty (a retry of every dead letter right after a discard
   * retried none).
   */
  private async putBack(channel: Channel, kept: number): Promise<void> {
    channel.nackAll(true);
    if (kept === 0) return;
    const until = Date.now() + PUT_BACK_WAIT_MS;
    while ((await channel.checkQueue(this.names.dead)).messageCount < kept && Date.now() < until) await sleep(PUT_BACK_POLL_MS);
  }

  /** Runs `use` on a channel of its own after the browses before it; whatever it took and did not ack goes back. */
  private inTurn<T>(operation: string, use: (channel: Channel) => Promise<T>): Promise<T> {
    const run = this.turn.then(() =>
      this.connection.withChannel(operation, async (channel) => {
        try {
          return await use(channel);
        } finally {
          // Everything not acked goes back where it was. Closing the channel would do it too; this is explicit.
          try {
            channel.nackAll(true);
          } catch {
            // Channel already closed: the broker requeued them.
          }
        }
      }),
    );
    this.turn = run.catch(() => undefined);
    return run;
  }

  private entry(message: GetMessage, position: number): DeadEntry {
    const decoded = decodeJob(message.content, message.properties);
    const diedAt = numberHeader(message.properties.headers, Header.diedAt) ?? (message.properties.timestamp ?? 0) * 1000;
    const json = decoded.ok
      ? decoded.json
      : unreadableJob({
          content: message.content,
          reason: decoded.reason,
          queue: this.names.dead,
          messageId: message.properties.messageId,
          // Stable across browses, so the operator can discard it by the id the list showed.
          fallbackId: `unreadable-${createHash("sha256").update(message.content).digest("hex").slice(0, 24)}`,
          exchange: message.fields.exchange,
          routingKey: message.fields.routingKey,
          headers: message.properties.headers,
        });
    return { message, json, diedAt, position };
  }
}

function newestFirst(entries: DeadEntry[]): DeadEntry[] {
  return [...entries].sort((a, b) => b.diedAt - a.diedAt || b.position - a.position);
}

function toInfo(entry: DeadEntry): JobInfo {
  return { job: entry.json, state: JobState.dead, lockedBy: null, lockedUntil: null, diedAt: new Date(entry.diedAt).toISOString() };
}

function toDeadJob(entry: DeadEntry): DeadJob {
  return { job: entry.json, diedAt: new Date(entry.diedAt).toISOString(), lastError: entry.json.errors.at(-1) ?? null };
}

function select(entries: DeadEntry[], params: RetryDeadParams): { found: DeadEntry[]; missing: string[] } {
  if ("all" in params) return { found: entries, missing: [] };
  const wanted = new Set(params.ids);
  const found = entries.filter((e) => wanted.has(e.json.id));
  const seen = new Set(found.map((e) => e.json.id));
  return { found, missing: params.ids.filter((id) => !seen.has(id)) };
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}
