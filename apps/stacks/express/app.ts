import express from "express";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start`: no listen() here. */
export function createApp(jfast: Jfast) {
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
  return app;
}
