import Koa from "koa";
import pg from "pg";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start` (through app.callback()): no listen() here. */
export function createApp(jfast: Jfast) {
  // Your own node-postgres pool, on the database jfast uses (DATABASE_URL): jfast's tables are there.
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  const app = new Koa();
  app.use(jfast.middleware.koa());
  app.use(async (ctx) => {
    if (ctx.method === "GET" && ctx.path === "/hello") {
      ctx.body = { hello: "koa" };
      return;
    }
    const match = ctx.method === "POST" ? /^\/orders\/([^/]+)\/(charge|place)$/.exec(ctx.path) : null;
    if (match?.[2] === "charge") {
      const job = charge.job({ order_id: match[1]! });
      await jfast.require("queue").enqueue(job);
      ctx.status = 202;
      ctx.body = { job_id: job.id, tenant_id: job.tenantId };
    } else if (match?.[2] === "place") {
      // The job is written inside the client's BEGIN … COMMIT: it exists if and only if that commits. ?fail=1
      // throws after the enqueue, so the client rolls back, the job with it, and Koa answers its own 500.
      const job = charge.job({ order_id: match[1]! });
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        // await client.query("INSERT INTO orders …"): your writes, in the same transaction
        await jfast.require("outbox").enqueue(client, job);
        if (ctx.query.fail) throw new Error(`order ${match[1]} failed after the enqueue`);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      } finally {
        client.release();
      }
      ctx.status = 201;
      ctx.body = { job_id: job.id };
    }
  });
  return app;
}
