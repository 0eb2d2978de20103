import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { DEFAULT_QUEUE } from "../core/named-queue.js";
import type { JobInfo } from "../core/queue-backend.js";
import type { QueueProvider } from "../queue/queue-provider.js";

/** The `queue` an admin call acts on (docs/queues.md#admin-api); absent: `default`. */
export const queueInput = z.string().min(1).max(40).optional();

/**
 * The service's queue seen as one named queue: its backend, paused tasks, throughput and depths, so a router
 * written for one queue serves each. `default` (or no name) on a service with one queue is the provider itself.
 */
export function queueScope(queue: QueueProvider, name: string | undefined): QueueProvider {
  const wanted = name ?? DEFAULT_QUEUE;
  if (wanted === DEFAULT_QUEUE && queue.queues.size === 1) return queue;
  const named = queue.queues.get(wanted);
  if (!named) {
    throw new TRPCError({ code: "BAD_REQUEST", message: `no queue named "${wanted}"; the service's queues are ${[...queue.queues.keys()].join(", ")}` });
  }
  return {
    ...queue,
    backend: named.backend,
    pauses: named.pauses,
    throughput: named.throughput,
    depths: () => named.backend.depths(),
  };
}

/** A job by id in whichever named queue holds it (ids name no queue; one lookup per queue, `default` first). */
export async function findJob(queue: QueueProvider, id: string): Promise<JobInfo | null> {
  if (queue.queues.size === 1) return queue.backend.getJob({ id });
  for (const named of queue.queues.values()) {
    const info = await named.backend.getJob({ id });
    if (info) return info;
  }
  return null;
}
