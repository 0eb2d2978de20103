// The shipping service's entry for the jfast CLI (docs/cli.md#the-service-entry-file):
//   providers  registered in every process that builds the app (the API and `jfast worker` alike)
//   createApp  the HTTP API that `jfast dev` serves next to jfast's /ready and /queue/stats
import { Hono } from "hono";
import { jfastErrorResponse, loadConfig, type Jfast } from "@jfast/runtime";
import { shipmentRoutes } from "./src/http/shipments.js";
import { requireTenant } from "./src/http/tenant.js";
import { createShipmentStore } from "./src/store/shipment-store.js";

/**
 * The shipment store, on the queue's Redis under the queue's name: read from the same configuration jfast
 * reads (jfast.toml, REDIS_URL, JFAST_QUEUE_NAME), so the store always sits beside the jobs.
 */
export async function providers({ root }: { root: string }) {
  const { queue } = await loadConfig({ root });
  return { shipments: createShipmentStore({ url: queue!.url!, namespace: queue!.name }) };
}

export function createApp(jfast: Jfast) {
  const app = new Hono();
  // x-tenant-id, x-request-id and traceparent go into the request context.
  app.use(jfast.middleware.hono());
  app.get("/", (c) => c.json({ service: jfast.config.service.name, tasks: jfast.tasks.names() }));
  for (const path of ["/shipments", "/shipments/*"]) app.use(path, requireTenant);
  app.route("/shipments", shipmentRoutes(jfast));
  // Logged with the request: the 500 the client gets does not carry the error.
  app.onError((error, c) => {
    jfast.logger.error("request failed", { method: c.req.method, path: c.req.path, error });
    return jfastErrorResponse(error) ?? c.text("Internal Server Error", 500);
  });
  return app;
}
