import { Hono } from "hono";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start`: no listen() here. */
export function createApp(jfast: Jfast) {
  // Your own drizzle over a pg pool, on the database jfast uses (DATABASE_URL): jfast's tables are there.
  const db = drizzle(new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 }));
  const app = new Hono();
  app.use(jfast.middleware.hono());
  app.get("/hello", (c) => c.json({ hello: "hono" }));
  app.post("/orders/:id/charge", async (c) => {
    const job = charge.job({ order_id: c.req.param("id") });
    await jfast.require("queue").enqueue(job);
    return c.json({ job_id: job.id, tenant_id: job.tenantId }, 202);
  });
  // The job is written inside drizzle's transaction: it exists if and only if it commits. ?fail=1 throws after
  // the enqueue, so the transaction rolls back, the job with it, and Hono answers its own 500.
  app.post("/orders/:id/place", async (c) => {
    const id = c.req.param("id");
    const job = charge.job({ order_id: id });
    await db.transaction(async (tx) => {
      // await tx.insert(orders).values({ … }): your writes, in the same transaction
      await jfast.require("outbox").enqueue(tx, job);
      if (c.req.query("fail")) throw new Error(`order ${id} failed after the enqueue`);
    });
    return c.json({ job_id: job.id }, 201);
  });
  return app;
}
