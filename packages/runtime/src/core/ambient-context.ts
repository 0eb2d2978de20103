import { AsyncLocalStorage } from "node:async_hooks";
import type { Job } from "./job.js";

/**
 * The ambient context core reads (a Job made inside a request copies its tenant, request id and trace). The API
 * around it — withRequest, withJob, middleware — is context/context.ts; the store lives here so that core imports
 * nothing from the rooms built on it.
 */
export interface RequestContext {
  tenantId?: string | null | undefined;
  requestId?: string | null | undefined;
  traceparent?: string | null | undefined;
  tracestate?: string | null | undefined;
}

export interface AmbientStore extends RequestContext {
  job?: Job;
}

export const ambientStorage = new AsyncLocalStorage<AmbientStore>();

export function currentContext(): Readonly<AmbientStore> | undefined {
  return ambientStorage.getStore();
}
