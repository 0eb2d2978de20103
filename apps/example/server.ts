// The billing service's entry for the jfast CLI (docs/cli.md#the-service-entry-file):
//   providers  registered in every process that builds the app (the API and `jfast worker` alike)
//   onStart    runs once the app has started, in every process: creates the billing tables
//   createApp  the HTTP API that `jfast dev` serves next to jfast's /ready and /queue/stats
import { Hono } from "hono";
import { jfastErrorResponse, type Jfast } from "@jfast/runtime";
import { createTables } from "./src/db/create-tables.js";
import { invoiceRoutes } from "./src/http/invoices.js";
import { alertRoutes, receiptRoutes } from "./src/http/receipts.js";
import { requireTenant } from "./src/http/tenant.js";
import { createDevMailer } from "./src/mailer.js";

export const providers = () => ({ mailer: createDevMailer() });

export async function onStart(jfast: Jfast) {
  await createTables(jfast.require("database"));
}

export function createApp(jfast: Jfast) {
  const app = new Hono();
  // x-tenant-id, x-request-id and traceparent go into the request context; jobs built in a handler carry them.
  app.use(jfast.middleware.hono());
  app.get("/", (c) => c.json({ service: jfast.config.service.name, tasks: jfast.tasks.names() }));
  for (const path of ["/invoices/*", "/receipts/*", "/alerts/*", "/invoices", "/receipts", "/alerts"]) app.use(path, requireTenant);
  app.route("/invoices", invoiceRoutes(jfast));
  app.route("/receipts", receiptRoutes(jfast));
  app.route("/alerts", alertRoutes(jfast));
  // A mistake jfast catches in a request (an event nobody receives, a plugin that is not enabled) answers 500
  // with the fix in the body; anything else is a plain 500. Either way the error is logged with the request,
  // since the client's answer does not carry it.
  app.onError((error, c) => {
    jfast.logger.error("request failed", { method: c.req.method, path: c.req.path, error });
    return jfastErrorResponse(error) ?? c.text("Internal Server Error", 500);
  });
  return app;
}
