import type { Job } from "../core/job.js";
import { ambientStorage, type AmbientStore, type RequestContext } from "../core/ambient-context.js";

/**
 * What a request (or a running job) carries through async calls: the tenant, the request id and the
 * W3C trace context. A Job built inside it copies these; the worker restores them around the handler.
 */
export type { RequestContext } from "../core/ambient-context.js";

type Store = AmbientStore;
const storage = ambientStorage;

export function withRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run({ ...context }, fn);
}

/** Runs `fn` with the job's tenant, request id and trace restored, and the job itself reachable. */
export function withJob<T>(job: Job, fn: () => T): T {
  return storage.run(
    {
      tenantId: job.tenantId,
      requestId: job.requestId,
      traceparent: job.trace?.traceparent ?? null,
      tracestate: job.trace?.tracestate ?? null,
      job,
    },
    fn,
  );
}

/** Runs `fn` with the same tenant, request and job, under another trace context (a span of this process). */
export function withTrace<T>(trace: { traceparent: string; tracestate?: string | null | undefined }, fn: () => T): T {
  return storage.run({ ...storage.getStore(), traceparent: trace.traceparent, tracestate: trace.tracestate ?? null }, fn);
}

export { currentContext } from "../core/ambient-context.js";

export function currentTenantId(): string | null {
  return storage.getStore()?.tenantId ?? null;
}

export function currentRequestId(): string | null {
  return storage.getStore()?.requestId ?? null;
}

export function currentJob(): Job | null {
  return storage.getStore()?.job ?? null;
}
