import type { ConsumeMessage } from "amqplib";
import type { JobJSON } from "../../core/job.js";
import { workerLostError } from "../../core/queue-backend.js";
import type { Arrival } from "./arrival.js";
import type { RabbitQueue } from "./context.js";
import { repairLostStep } from "./flows.js";
import { encodeJob, numberHeader, unreadableJob } from "./message.js";
import { Header } from "./names.js";
import { route, toDead } from "./publications.js";

/** Handles an arrival that is not handed out: records a lost attempt, sends an early one round, buries garbage. */
export async function repair(q: RabbitQueue, arrival: Exclude<Arrival, { kind: "ready" }>, message: ConsumeMessage): Promise<void> {
  const snoozes = numberHeader(message.properties.headers, Header.snoozes) ?? 0;
  if (arrival.kind === "early") {
    await q.connection.publish("send a long delay round the cascade again", [route(q, arrival.json, { dueMs: arrival.dueAt, snoozes })]);
    return;
  }
  if (arrival.kind === "unreadable") {
    const json = unreadableJob({
      content: message.content,
      reason: arrival.reason,
      queue: q.names.work,
      messageId: message.properties.messageId,
      exchange: message.fields.exchange,
      routingKey: message.fields.routingKey,
      headers: message.properties.headers,
    });
    q.options.logger?.error("dead-lettered a message that is not a jfast job", { id: json.id, reason: arrival.reason });
    await q.connection.publish("dead-letter an unreadable message", [toDead(q, json)]);
    return;
  }
  // lost: the attempt it was delivered for is spent. Record it in a fresh message (the redelivered one
  // cannot be changed), dead when it was the last one.
  const attempt = arrival.json.attempts + 1;
  const json: JobJSON = { ...arrival.json, attempts: attempt, errors: [...arrival.json.errors, workerLostError(attempt)] };
  const spentAll = attempt >= (json.maxAttempts ?? 1);
  if (json.flow && q.options.flows) return repairLostStep(q, q.options.flows, json, spentAll, snoozes);
  await q.connection.publish("record a lost attempt", [
    spentAll ? toDead(q, json) : { exchange: "", routingKey: q.names.work, message: encodeJob(json, { snoozes }) },
  ]);
}
