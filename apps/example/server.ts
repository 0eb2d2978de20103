// The billing service's entry for the jfast CLI (docs/cli.md#the-service-entry-file):
//   providers  registered in every process that builds the app (API and worker alike)
//   createApp  the HTTP API that `jfast dev` serves next to jfast's /ready and /queue/stats
import { Hono } from "hono";
import type { Jfast } from "@jfast/runtime";
import { createDevMailer, type Mailer } from "./src/mailer.js";
import { invoiceRoutes } from "./src/http/invoices.js";
import { receiptRoutes } from "./src/http/receipts.js";

export const providers = () => ({ mailer: createDevMailer() });

export function createApp(jfast: Jfast) {
  const app = new Hono();
  // x-tenant-id, x-request-id and traceparent go into the request context; jobs built in a handler carry them.
  app.use(jfast.middleware.hono());
  app.get("/", (c) => c.json({ service: jfast.config.service.name, tasks: jfast.tasks.names() }));
  app.route("/invoices", invoiceRoutes(jfast));
  app.route("/receipts", receiptRoutes(jfast));
  app.get("/emails", (c) => c.json(jfast.require<Mailer>("mailer").sent({ tenantId: c.req.header("x-tenant-id") ?? null })));
  return app;
}
