import { Controller, Get, HttpCode, Inject, Module, Param, Post, Query, type OnApplicationShutdown } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import postgres from "postgres";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

const JFAST = Symbol("jfast");
const SQL = Symbol("sql");

@Controller()
class OrdersController implements OnApplicationShutdown {
  // By token: tsx (esbuild) does not emit the parameter types Nest would otherwise inject by.
  constructor(
    @Inject(JFAST) private readonly jfast: Jfast,
    @Inject(SQL) private readonly sql: postgres.Sql,
  ) {}

  @Get("hello")
  hello() {
    return { hello: "nest" };
  }

  @Post("orders/:id/charge")
  @HttpCode(202)
  async charge(@Param("id") id: string) {
    const job = charge.job({ order_id: id });
    await this.jfast.require("queue").enqueue(job);
    return { job_id: job.id, tenant_id: job.tenantId };
  }

  /**
   * The job is written inside postgres.js's sql.begin: it exists if and only if that commits. ?fail=1 throws after
   * the enqueue, so the transaction rolls back, the job with it, and Nest's exception filter answers its 500.
   */
  @Post("orders/:id/place")
  @HttpCode(201)
  async place(@Param("id") id: string, @Query("fail") fail?: string) {
    const job = charge.job({ order_id: id });
    await this.sql.begin(async (sql) => {
      // await sql`INSERT INTO orders …`: your writes, in the same transaction
      await this.jfast.require("outbox").enqueue(sql, job);
      if (fail) throw new Error(`order ${id} failed after the enqueue`);
    });
    return { job_id: job.id };
  }

  async onApplicationShutdown() {
    await this.sql.end();
  }
}

/** Served by `jfast dev` / `jfast start`, which call init() and, on SIGTERM, close(): no listen() here. */
export async function createApp(jfast: Jfast) {
  // Your own postgres.js, on the database jfast uses (DATABASE_URL): jfast's tables are there.
  const options = { max: 2, onnotice: () => undefined };
  const sql = process.env.DATABASE_URL ? postgres(process.env.DATABASE_URL, options) : postgres(options);
  @Module({
    controllers: [OrdersController],
    providers: [
      { provide: JFAST, useValue: jfast },
      { provide: SQL, useValue: sql },
    ],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule);
  app.use(jfast.middleware.express());
  return app;
}
