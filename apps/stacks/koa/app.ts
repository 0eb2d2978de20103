import Koa from "koa";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start` (through app.callback()): no listen() here. */
export function createApp(jfast: Jfast) {
  const app = new Koa();
  app.use(jfast.middleware.koa());
  app.use(async (ctx) => {
    if (ctx.method === "GET" && ctx.path === "/hello") {
      ctx.body = { hello: "koa" };
      return;
    }
    const match = ctx.method === "POST" ? /^\/orders\/([^/]+)\/charge$/.exec(ctx.path) : null;
    if (match) {
      const job = charge.job({ order_id: match[1]! });
      await jfast.require("queue").enqueue(job);
      ctx.status = 202;
      ctx.body = { job_id: job.id, tenant_id: job.tenantId };
    }
  });
  return app;
}
