import { Redis } from "ioredis";

export interface Shipment {
  id: string;
  invoiceId: string;
  tenantId: string | null;
  customerEmail: string;
  amountCents: number;
  carrier: string;
  trackingCode: string;
  status: "created";
  createdAt: string;
}

export type NewShipment = Omit<Shipment, "status" | "createdAt">;

/**
 * Shipments, one per invoice, in Redis. `provider name: "shipments"`; tasks reach it with
 * ctx.require("shipments") in the API and the worker alike.
 */
// The service's own provider, declared once: ctx.require("shipments") is a ShipmentStore everywhere.
declare module "@jfast/runtime" {
  interface Providers {
    shipments: ShipmentStore;
  }
}

export interface ShipmentStore {
  /**
   * Stores the invoice's shipment, or returns the one already stored for that invoice (`created: false`):
   * a retried job or a redelivered event never ships twice.
   */
  createForInvoice(shipment: NewShipment): Promise<{ shipment: Shipment; created: boolean }>;
  /** The tenant's shipments, newest first, at most `limit`. */
  list(params: { tenantId: string; limit: number }): Promise<Shipment[]>;
  forInvoice(params: { tenantId: string; invoiceId: string }): Promise<Shipment | null>;
  close(): Promise<void>;
}

/**
 * Keys carry the queue's hash tag, `{<namespace>}`, so the service's jobs and its shipments share one prefix
 * (one namespace to move with JFAST_QUEUE_NAME, one pattern to delete):
 *   {ns}:shipments:<tenant>          HASH  invoice id → shipment (JSON)
 *   {ns}:shipments-by-time:<tenant>  ZSET  invoice id → creation time (ms), for the newest-first list
 */
export function createShipmentStore(params: { url: string; namespace: string }): ShipmentStore {
  const redis = new Redis(params.url, { maxRetriesPerRequest: 3, lazyConnect: true });
  const byInvoice = (tenantId: string | null) => `{${params.namespace}}:shipments:${tenantId ?? ""}`;
  const byTime = (tenantId: string | null) => `{${params.namespace}}:shipments-by-time:${tenantId ?? ""}`;

  return {
    async createForInvoice(input) {
      const candidate: Shipment = { ...input, status: "created", createdAt: new Date().toISOString() };
      const key = byInvoice(input.tenantId);
      const created = (await redis.hsetnx(key, input.invoiceId, JSON.stringify(candidate))) === 1;
      const shipment = created ? candidate : (JSON.parse((await redis.hget(key, input.invoiceId))!) as Shipment);
      // After the hash, and NX: a crash between the two is repaired by the retry, which lands here again.
      await redis.zadd(byTime(input.tenantId), "NX", Date.parse(shipment.createdAt), input.invoiceId);
      return { shipment, created };
    },
    async list({ tenantId, limit }) {
      const ids = await redis.zrevrange(byTime(tenantId), 0, limit - 1);
      if (ids.length === 0) return [];
      const rows = await redis.hmget(byInvoice(tenantId), ...ids);
      return rows.filter((row): row is string => row !== null).map((row) => JSON.parse(row) as Shipment);
    },
    async forInvoice({ tenantId, invoiceId }) {
      const row = await redis.hget(byInvoice(tenantId), invoiceId);
      return row ? (JSON.parse(row) as Shipment) : null;
    },
    async close() {
      redis.disconnect();
    },
  };
}
