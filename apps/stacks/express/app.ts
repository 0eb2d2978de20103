import express from "express";
import knex from "knex";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start`: no listen() here. */
export function createApp(jfast: Jfast) {
  // Your own Knex, on the database jfast uses (DATABASE_URL): jfast's tables are there.
  const db = knex({ client: "pg", connection: process.env.DATABASE_URL, pool: { min: 0, max: 2 } });
  const app = express();
  app.use(jfast.middleware.express());
  app.use(express.json());
  app.get("/hello", (_req, res) => {
    res.json({ hello: "express" });
  });
  app.post("/orders/:id/charge", async (req, res) => {
    const job = charge.job({ order_id: req.params.id });
    await jfast.require("queue").enqueue(job);
    res.status(202).json({ job_id: job.id, tenant_id: job.tenantId });
  });
  // The job is written inside Knex's transaction: it exists if and only if the trx commits. ?fail=1 throws
  // after the enqueue, so the trx rolls back, the job with it, and Express answers its own 500.
  app.post("/orders/:id/place", async (req, res) => {
    const job = charge.job({ order_id: req.params.id });
    await db.transaction(async (trx) => {
      // await trx("orders").insert({ id: req.params.id, … }): your writes, in the same transaction
      await jfast.require("outbox").enqueue(trx, job);
      if (req.query.fail) throw new Error(`order ${req.params.id} failed after the enqueue`);
    });
    res.status(201).json({ job_id: job.id });
  });
  return app;
}
