import { createRequire } from "node:module";
import { importDriver } from "../core/import-driver.js";

const importKafkajs = () => import("kafkajs");
type KafkaJs = Awaited<ReturnType<typeof importKafkajs>>["default"];

/** What this module reads and replaces on kafkajs' per-connection request queue (src/network/requestQueue). */
interface RequestQueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
  scheduleCheckPendingRequests(): void;
}

const QUIETED = Symbol.for("jfast.kafkajs.idleRequestCheck");

let loading: Promise<KafkaJs> | null = null;

/**
 * kafkajs, loaded once (the `kafkajs` driver: docs/getting-started.md#drivers), with its request queues' idle loop
 * stopped.
 *
 * In kafkajs 2.2.4 every broker connection re-arms a timer after each check of its pending requests, whether any
 * request is pending or not, with a delay of `throttledUntil - Date.now()`: negative when nothing is throttled, so
 * Node runs it after 1 ms. Each connection so checks an empty queue about a thousand times a second for as long as
 * it is open (kafkajs issues #1704 and #1751; Node 24 also prints a TimeoutNegativeWarning for it). An idle jfast
 * process with the Kafka plugin spent about 5 % of a core on that, and the steady allocation of timers kept V8's
 * young generation growing. The check is only ever needed for a request waiting in the queue (a request that
 * goes pending schedules one itself, and every answer or timeout checks again) or while the broker throttles the
 * client, so with neither the timer is not armed.
 */
export function loadKafkajs(): Promise<KafkaJs> {
  loading ??= importDriver("kafkajs", importKafkajs).then((module) => {
    quietIdleRequestQueues();
    return module.default;
  });
  return loading;
}

function quietIdleRequestQueues(): void {
  let RequestQueue: { prototype: RequestQueueState & { [QUIETED]?: true } } | undefined;
  try {
    RequestQueue = createRequire(import.meta.url)("kafkajs/src/network/requestQueue/index.js") as typeof RequestQueue;
  } catch {
    return; // laid out otherwise (another version): left as it is
  }
  const queue = RequestQueue?.prototype;
  if (!queue || typeof queue.scheduleCheckPendingRequests !== "function" || queue[QUIETED]) return;
  const schedule = queue.scheduleCheckPendingRequests;
  queue.scheduleCheckPendingRequests = function (this: RequestQueueState): void {
    if (this.pending.length === 0 && !this.throttleCheckTimeoutId && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  queue[QUIETED] = true;
}
