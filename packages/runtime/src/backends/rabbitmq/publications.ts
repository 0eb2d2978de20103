import type { AttemptError, Job, JobJSON } from "../../core/job.js";
import { ErrorCode } from "../../errors/codes.js";
import { JfastError } from "../../errors/jfast-error.js";
import type { Publication } from "./connection.js";
import type { Delivery } from "./consumer.js";
import type { RabbitQueue } from "./context.js";
import { planDelay } from "./delay-key.js";
import { encodeJob, numberHeader } from "./message.js";
import { Header } from "./names.js";

/** Where a job goes to become claimable at `dueMs`: the work queue now, or into the delay cascade. */
export function route(q: RabbitQueue, json: JobJSON | Job, at: { dueMs: number; snoozes?: number }): Publication {
  const { dueMs, snoozes = 0 } = at;
  const delayMs = dueMs - Date.now();
  const carried = snoozes > 0 ? { snoozes } : {};
  if (delayMs <= 0) return { exchange: "", routingKey: q.names.work, message: encodeJob(json, carried) };
  const plan = planDelay(delayMs, q.shape);
  return {
    exchange: q.names.delayLevel(plan.entryLevel),
    routingKey: plan.routingKey,
    message: encodeJob(json, plan.overflow ? { dueAt: dueMs, ...carried } : carried),
  };
}

export function toDead(q: RabbitQueue, json: JobJSON): Publication {
  return { exchange: "", routingKey: q.names.dead, message: encodeJob(json, { diedAt: Date.now() }) };
}

/** Publishes what replaces a delivery, then acks it (Consumer.replace). If the publish fails it goes back (lost attempt). */
export function replace(q: RabbitQueue, delivery: Delivery, publications: Publication[]): Promise<void> {
  return q.consumer.replace([delivery.json.id], [delivery], () => q.connection.publish("record the job's outcome", publications));
}

/** Returns deliveries to the queue as `json` says, now or (`dueMs`) through the delay cascade, then acks them. */
export function putBack(q: RabbitQueue, deliveries: Delivery[], back: { json: (d: Delivery) => JobJSON; dueMs?: number | undefined }): Promise<void> {
  const { json, dueMs } = back;
  if (deliveries.length === 0) return Promise.resolve();
  return q.consumer.replace(
    deliveries.map((d) => d.json.id),
    deliveries,
    () =>
      q.connection.publish(
        "return jobs to the queue",
        deliveries.map((d) =>
          dueMs === undefined
            ? { exchange: "", routingKey: q.names.work, message: encodeJob(json(d), { snoozes: snoozesOf(d) }) }
            : route(q, json(d), { dueMs, snoozes: snoozesOf(d) }),
        ),
      ),
  );
}

/** Publishes, waiting out a broker restart: an unconfirmed publish is retried (a duplicate, never a loss). */
export async function publishPatiently(q: RabbitQueue, operation: string, build: () => Publication[]): Promise<void> {
  const deadline = Date.now() + q.connectTimeoutMs;
  for (;;) {
    try {
      await q.connection.publish(operation, build());
      return;
    } catch (error) {
      const retryable = error instanceof JfastError && error.code === ErrorCode.BACKEND_UNAVAILABLE;
      if (!retryable || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** How many times the delivered job snoozed before (Header.snoozes). */
export function snoozesOf(delivery: Delivery): number {
  return numberHeader(delivery.message.properties.headers, Header.snoozes) ?? 0;
}

/** The stored job with the attempt it was delivered for counted and its error recorded. */
export function spent(delivery: Delivery, error: AttemptError): JobJSON {
  const json = structuredClone(delivery.json);
  json.attempts += 1;
  json.errors.push(error);
  return json;
}
