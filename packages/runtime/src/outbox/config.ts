import { z } from "zod";

const seconds = z.number().positive();

/** `[plugin.outbox]`. */
export const outboxSchema = z.strictObject({
  max_attempts: z.number().int().min(1).default(10),
  poll_interval: seconds.default(1),
  backoff_base: seconds.default(1),
  send_timeout: seconds.default(30),
  retention: z.number().min(0).default(3600),
});

export interface OutboxConfig {
  /** Delivery attempts of a relayed row before it is dead. */
  maxAttempts: number;
  /** The relay's safety-net poll; a committed write wakes it at once through NOTIFY. */
  pollIntervalMs: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), capped at 5 minutes. */
  backoffBaseMs: number;
  /** A send that has not settled by then counts as failed (it is retried; the id makes a repeat a no-op where the backend can tell). */
  sendTimeoutMs: number;
  /** How long delivered rows are kept: a repeated id written within it is recognised and not relayed again. */
  retentionMs: number;
}

export function resolveOutbox(section: z.output<typeof outboxSchema> | undefined): OutboxConfig {
  const outbox = section ?? outboxSchema.parse({});
  return {
    maxAttempts: outbox.max_attempts,
    pollIntervalMs: Math.round(outbox.poll_interval * 1000),
    backoffBaseMs: Math.round(outbox.backoff_base * 1000),
    sendTimeoutMs: Math.round(outbox.send_timeout * 1000),
    retentionMs: Math.round(outbox.retention * 1000),
  };
}
