import { parentPort } from "node:worker_threads";
import type { LeaseExtender } from "../../core/lease-extender.js";
import { now, type FromHeartbeatThread, type ToHeartbeatThread } from "./messages.js";

/**
 * The heartbeat thread (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease): it watches the beats of every worker of the process and, when a
 * worker's main thread has been silent for 40 % of a lease (a handler keeping the event loop busy, a pool
 * too busy to lend the heartbeat a connection), it extends that worker's leases itself, through a connection of
 * its own. While the main thread beats it does nothing, so it costs no query.
 */
interface Held {
  key: string;
  worker: number;
  workerId: string;
  leaseMs: number;
  /** Each job held, with when it was first held (a beat that began before then does not drop it). */
  ids: Map<string, number>;
  /** When the main thread last beat for this worker. */
  lastBeat: number;
  /** When this thread last extended on its behalf. */
  lastKept: number;
}

const port = parentPort!;
const specs = new Map<string, { module: string; options: Readonly<Record<string, unknown>> }>();
const extenders = new Map<string, Promise<LeaseExtender>>();
const held = new Map<string, Held>();
const CHECK_MS = 50;

port.on("message", (message: ToHeartbeatThread) => {
  switch (message.type) {
    case "open":
      specs.set(message.key, message.spec);
      // Connected now, not when first needed: loading the driver and connecting can take longer than a lease.
      extenderFor(message.key).catch((error: unknown) =>
        post({ type: "failed", key: message.key, worker: null, message: (error as Error).message }),
      );
      break;
    case "hold": {
      const entry = entryFor(message.key, message.worker, message.workerId, message.leaseMs);
      for (const id of message.ids) if (!entry.ids.has(id)) entry.ids.set(id, message.at);
      break;
    }
    case "beat": {
      const entry = entryFor(message.key, message.worker, message.workerId, message.leaseMs);
      replaceHeld(entry, message.ids, message.heldAt);
      // The main thread's time of the beat, not this thread's time of reading it: this thread may read late.
      entry.lastBeat = Math.max(entry.lastBeat, message.at);
      break;
    }
    case "held":
      replaceHeld(entryFor(message.key, message.worker, message.workerId, message.leaseMs), message.ids, message.heldAt);
      break;
    case "forget":
      held.delete(`${message.key}\n${message.worker}`);
      break;
    case "close":
      for (const extender of extenders.values()) extender.then((e) => e.close()).catch(() => undefined);
      extenders.clear();
      specs.clear();
      held.clear();
      break;
  }
});

/** The jobs the worker held at `heldAt` replace those it had told of; held after then, they stay (a later list says). */
function replaceHeld(entry: Held, list: readonly string[], at: number): void {
  const ids = new Map<string, number>();
  for (const id of list) ids.set(id, entry.ids.get(id) ?? at);
  // Held after the list was taken (a claim while a beat's query was in flight): kept until a later list says.
  for (const [id, heldAt] of entry.ids) if (heldAt > at && !ids.has(id)) ids.set(id, heldAt);
  entry.ids = ids;
}

function entryFor(key: string, worker: number, workerId: string, leaseMs: number): Held {
  const id = `${key}\n${worker}`;
  let entry = held.get(id);
  if (!entry) {
    entry = { key, worker, workerId, leaseMs, ids: new Map(), lastBeat: now(), lastKept: 0 };
    held.set(id, entry);
  }
  entry.leaseMs = leaseMs;
  return entry;
}

let busy = false;
setInterval(() => {
  if (busy) return;
  busy = true;
  void keepSilentWorkers().finally(() => (busy = false));
}, CHECK_MS);

async function keepSilentWorkers(): Promise<void> {
  const at = now();
  for (const entry of held.values()) {
    if (entry.ids.size === 0) continue;
    // The main thread beats every third of the lease; silent for 40 % of it, it is late rather than between beats,
    // and the thread takes over with 60 % of the lease still to run (room for a machine too loaded to be punctual).
    const late = Math.max(entry.leaseMs / 3 + 100, entry.leaseMs * 0.4);
    if (at - entry.lastBeat < late || at - entry.lastKept < entry.leaseMs / 3) continue;
    const ids = [...entry.ids.keys()];
    try {
      const extender = await extenderFor(entry.key);
      const cancelled = await extender.extend({ workerId: entry.workerId, jobIds: ids, leaseMs: entry.leaseMs });
      entry.lastKept = now();
      for (const id of cancelled) entry.ids.delete(id);
      post({ type: "kept", key: entry.key, worker: entry.worker, workerId: entry.workerId, ids, cancelled, silentMs: Math.round(entry.lastKept - entry.lastBeat) });
    } catch (error) {
      // The extender reconnects by itself (a new client, ioredis's own reconnection); tried again next check.
      post({ type: "failed", key: entry.key, worker: entry.worker, message: (error as Error).message });
    }
  }
}

function extenderFor(key: string): Promise<LeaseExtender> {
  let extender = extenders.get(key);
  if (!extender) {
    const spec = specs.get(key);
    if (!spec) return Promise.reject(new Error(`no connection was described for ${key}`));
    extender = import(spec.module).then((m: { openLeaseExtender(options: unknown): Promise<LeaseExtender> }) => m.openLeaseExtender(spec.options));
    extender.catch(() => extenders.delete(key));
    extenders.set(key, extender);
  }
  return extender;
}

function post(message: FromHeartbeatThread): void {
  port.postMessage(message);
}
