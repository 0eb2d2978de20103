import type { MiddlewareHandler } from "hono";
import { currentTenantId } from "@jfast/runtime";

/** Shipments belong to a tenant: refuse requests that do not name one (after jfast's context middleware). */
export const requireTenant: MiddlewareHandler = async (c, next) => {
  if (!currentTenantId()) return c.json({ error: "send the x-tenant-id header" }, 400);
  await next();
};
