import { Controller, Get, HttpCode, Inject, Module, Param, Post } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { Jfast } from "@jfast/runtime";
import { charge } from "./modules/orders/tasks.js";

const JFAST = Symbol("jfast");

@Controller()
class OrdersController {
  // By token: tsx (esbuild) does not emit the parameter types Nest would otherwise inject by.
  constructor(@Inject(JFAST) private readonly jfast: Jfast) {}

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
}

/** Served by `jfast dev` / `jfast start`, which call init() and, on SIGTERM, close(): no listen() here. */
export async function createApp(jfast: Jfast) {
  @Module({ controllers: [OrdersController], providers: [{ provide: JFAST, useValue: jfast }] })
  class AppModule {}
  const app = await NestFactory.create(AppModule);
  app.use(jfast.middleware.express());
  return app;
}
