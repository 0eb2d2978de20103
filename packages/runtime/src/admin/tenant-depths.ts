import { ErrorCode } from "../errors/codes.js";
import { ListOrder, ListState, type JobInfo } from "../core/queue-backend.js";
import type { QueueProvider } from "../queue/queue-provider.js";

/** One tenant's share of a queue: its jobs waiting and running, and how long its oldest due job has waited. */
export interface TenantDepthView {
  /** null: jobs without a tenant. */
  tenantId: string | null;
  ready: number;
  scheduled: number;
  running: number;
  /** Since when its oldest due job waits (its due time); null when none is due. */
  oldestReadyAt: string | null;
  /** Milliseconds that job has waited by now; 0 when none is due. */
  waitMs: number;
}

export interface TenantDepthsView {
  supported: boolean;
  /** Why not, where the backend cannot list waiting jobs (RabbitMQ). */
  reason: string | null;
  /** Most waiting first. */
  tenants: TenantDepthView[];
  /** True when each state fitted in the window read; false: the counts are of the oldest `window` jobs of a state. */
  exact: boolean;
  window: number;
}

/** How many jobs of each state are read at most: one bounded listing page each, never a count of the whole state. */
export const TENANT_WINDOW = 1000;

/**
 * Per-tenant depths and wait (docs/flow-control.md#outbox-and-events), from one page of each waiting or running state
 * in its own index order (oldest due first), so the cost is bounded whatever the backlog: the tenants whose jobs
 * are at the head of the queue, the ones a claim reaches next, are always counted.
 */
export async function tenantDepths(queue: Pick<QueueProvider, "backend">, now: number = Date.now()): Promise<TenantDepthsView> {
  const read = (state: ListState) => queue.backend.listJobs({ state, order: ListOrder.oldest, limit: TENANT_WINDOW });
  let pages;
  try {
    pages = await Promise.all([read(ListState.ready), read(ListState.scheduled), read(ListState.running)]);
  } catch (error) {
    if ((error as { code?: unknown }).code !== ErrorCode.NOT_SUPPORTED) throw error;
    return { supported: false, reason: (error as Error).message.split("\n")[0]!, tenants: [], exact: false, window: TENANT_WINDOW };
  }
  const [ready, scheduled, running] = pages;
  const byTenant = new Map<string | null, TenantDepthView>();
  const of = (info: JobInfo): TenantDepthView => {
    const tenantId = info.job.tenantId;
    let view = byTenant.get(tenantId);
    if (!view) byTenant.set(tenantId, (view = { tenantId, ready: 0, scheduled: 0, running: 0, oldestReadyAt: null, waitMs: 0 }));
    return view;
  };
  for (const info of ready.rows) {
    const view = of(info);
    view.ready++;
    if (view.oldestReadyAt === null || Date.parse(info.job.availableAt) < Date.parse(view.oldestReadyAt)) view.oldestReadyAt = info.job.availableAt;
  }
  for (const info of scheduled.rows) of(info).scheduled++;
  for (const info of running.rows) of(info).running++;
  const tenants = [...byTenant.values()];
  for (const view of tenants) view.waitMs = view.oldestReadyAt === null ? 0 : Math.max(0, now - Date.parse(view.oldestReadyAt));
  tenants.sort((a, b) => b.ready + b.scheduled - (a.ready + a.scheduled) || b.waitMs - a.waitMs);
  return { supported: true, reason: null, tenants, exact: pages.every((p) => p.next === null), window: TENANT_WINDOW };
}
