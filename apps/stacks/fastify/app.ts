import Fastify from "fastify";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

/** Served by `jfast dev` / `jfast start`, which call ready() and, on SIGTERM, close(): no listen() here. */
export function createApp(jfast: Jfast) {
  // Your own Kysely, on the database jfast uses (DATABASE_URL): jfast's tables are there.
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 }) }) });
  const app = Fastify();
  app.addHook("onClose", async () => db.destroy());
  // preHandler runs after the body is parsed, and calls the route from inside the context it sets.
  app.addHook("preHandler", jfast.middleware.fastify());
  app.get("/hello", async () => ({ hello: "fastify" }));
  app.post<{ Params: { id: string } }>("/orders/:id/charge", async (req, reply) => {
    const job = charge.job({ order_id: req.params.id });
    await jfast.require("queue").enqueue(job);
    return reply.code(202).send({ job_id: job.id, tenant_id: job.tenantId });
  });
  // The job is written inside Kysely's Transaction: it exists if and only if it commits. ?fail=1 throws after
  // the enqueue, so the transaction rolls back, the job with it, and Fastify answers its own 500.
  app.post<{ Params: { id: string }; Querystring: { fail?: string } }>("/orders/:id/place", async (req, reply) => {
    const job = charge.job({ order_id: req.params.id });
    await db.transaction().execute(async (trx) => {
      // await trx.insertInto("orders").values({ … }).execute(): your writes, in the same transaction
      await jfast.require("outbox").enqueue(trx, job);
      if (req.query.fail) throw new Error(`order ${req.params.id} failed after the enqueue`);
    });
    return reply.code(201).send({ job_id: job.id });
  });
  return app;
}
