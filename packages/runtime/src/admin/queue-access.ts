import { TRPCError } from "@trpc/server";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { AdminSources } from "./sources.js";

/** The started queue, or a PRECONDITION_FAILED naming the fix (mutations need a queue to act on). */
export function requireQueue(sources: AdminSources): QueueProvider {
  const queue = sources.queue();
  if (!queue) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: sources.plugins.includes("queue")
        ? "the queue is not started yet (jfast.start() has not finished)"
        : `the service "${sources.service.name}" does not enable the queue plugin`,
    });
  }
  return queue;
}

/** Runs a backend call and turns a driver failure into an answer the dashboard can show. */
export async function backendCall<T>(queue: QueueProvider, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof TRPCError) throw error;
    throw new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: `${what} failed on the ${queue.backend.kind} queue: ${(error as Error).message}`,
      cause: error,
    });
  }
}
