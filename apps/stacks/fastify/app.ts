import Fastify from "fastify";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start`, which call ready() and, on SIGTERM, close(): no listen() here. */
export function createApp(jfast: Jfast) {
  const app = Fastify();
  // preHandler runs after the body is parsed, and calls the route from inside the context it sets.
  app.addHook("preHandler", jfast.middleware.fastify());
  app.get("/hello", async () => ({ hello: "fastify" }));
  app.post<{ Params: { id: string } }>("/orders/:id/charge", async (req, reply) => {
    const job = charge.job({ order_id: req.params.id });
    await jfast.require("queue").enqueue(job);
    return reply.code(202).send({ job_id: job.id, tenant_id: job.tenantId });
  });
  return app;
}
