import { afterEach, describe, expect, it } from "vitest";
import { startDetached, listeningUrl, type DetachedJfast } from "./detached-jfast.js";
import { createServiceRoot } from "./jfast-process.js";

// `jfast start` (and `jfast dev`) serving the app that each web framework's createApp returns, as a user would
// write it: the app's routes, jfast's /ready beside them, an error logged with its request id and answered by the
// framework, a job enqueued inside a request carrying the request's tenant, and a clean exit on SIGTERM.

const TOML = `[service]\nname = "web"\nbase_port = 1\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`;
const TASKS = `
import { task } from "@jfast/runtime";
export const hello = task("demo.hello", async () => {});
`;
/** Enqueues demo.hello in the current request context and says what the job carries. */
const ENQUEUE = `
import { Job, type Jfast } from "@jfast/runtime";
export async function enqueue(jfast: Jfast) {
  const job = new Job({ task: "demo.hello" });
  await jfast.require("queue").enqueue(job);
  return { tenant_id: job.tenantId, request_id: job.requestId };
}
`;

const SERVERS: Record<string, string> = {
  hono: `
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";
export function createApp(jfast: Jfast) {
  const app = new Hono();
  app.use(jfast.middleware.hono());
  app.get("/hello", (c) => c.json({ hello: "hono" }));
  app.get("/boom", async () => { throw new Error("boom from hono"); });
  app.get("/teapot", () => { throw new HTTPException(418, { message: "client error from hono" }); });
  app.post("/enqueue", async (c) => c.json({ ...(await enqueue(jfast)), body: await c.req.json() }, 202));
  return app;
}
`,
  express: `
import express from "express";
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";
export function createApp(jfast: Jfast) {
  const app = express();
  app.use(express.json(), jfast.middleware.express());
  app.get("/hello", (_req, res) => { res.json({ hello: "express" }); });
  app.get("/boom", async () => { throw new Error("boom from express"); });
  app.get("/teapot", () => { throw Object.assign(new Error("client error from express"), { status: 418 }); });
  app.post("/enqueue", async (req, res) => { res.status(202).json({ ...(await enqueue(jfast)), body: req.body }); });
  return app;
}
`,
  koa: `
import Koa from "koa";
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";
export function createApp(jfast: Jfast) {
  const app = new Koa();
  app.use(jfast.middleware.koa());
  app.use(async (ctx) => {
    if (ctx.path === "/hello") ctx.body = { hello: "koa" };
    else if (ctx.path === "/boom") throw new Error("boom from koa");
    else if (ctx.path === "/teapot") ctx.throw(418, "client error from koa");
    else if (ctx.path === "/enqueue" && ctx.method === "POST") {
      ctx.status = 202;
      ctx.body = await enqueue(jfast);
    }
  });
  return app;
}
`,
  fastify: `
import Fastify from "fastify";
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";
export const closed: string[] = [];
export function createApp(jfast: Jfast) {
  const app = Fastify();
  app.addHook("preHandler", jfast.middleware.fastify());
  app.addHook("onClose", async () => { jfast.logger.info("fastify onClose ran"); });
  app.get("/hello", async () => ({ hello: "fastify" }));
  app.get("/boom", async () => { throw new Error("boom from fastify"); });
  app.get("/teapot", async () => { throw Object.assign(new Error("client error from fastify"), { statusCode: 418 }); });
  app.post("/enqueue", async (req, reply) => reply.code(202).send({ ...(await enqueue(jfast)), body: req.body }));
  return app;
}
`,
  nest: `
import { Controller, Get, HttpCode, HttpException, Module, Post, Req, type OnApplicationShutdown } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import express from "express";
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";

// Decorators applied as calls, so the test does not depend on the TypeScript loader's decorator settings.
export async function createApp(jfast: Jfast) {
  class WebController {
    hello() { return { hello: "nest" }; }
    boom(): never { throw new Error("boom from nest"); }
    teapot(): never { throw new HttpException("client error from nest", 418); }
    async enqueue(req: { body: unknown }) { return { ...(await enqueue(jfast)), body: req.body }; }
  }
  const proto = WebController.prototype;
  const method = (name: keyof WebController) => Object.getOwnPropertyDescriptor(proto, name)!;
  Get("hello")(proto, "hello", method("hello"));
  Get("boom")(proto, "boom", method("boom"));
  Get("teapot")(proto, "teapot", method("teapot"));
  Post("enqueue")(proto, "enqueue", method("enqueue"));
  HttpCode(202)(proto, "enqueue", method("enqueue"));
  Req()(proto, "enqueue", 0);
  Controller()(WebController);
  class AppModule implements OnApplicationShutdown {
    onApplicationShutdown() { jfast.logger.info("nest shutdown hook ran"); }
  }
  Module({ controllers: [WebController] })(AppModule);
  const app = await NestFactory.create(AppModule, { bodyParser: false, logger: ["error"] });
  app.use(express.json(), jfast.middleware.express());
  return app;
}
`,
  "nest-fastify": `
import { Controller, Get, HttpCode, HttpException, Module, Post, Req, type OnApplicationShutdown } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter, type NestFastifyApplication } from "@nestjs/platform-fastify";
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";

// Decorators applied as calls, so the test does not depend on the TypeScript loader's decorator settings.
export async function createApp(jfast: Jfast) {
  class WebController {
    hello() { return { hello: "nest-fastify" }; }
    boom(): never { throw new Error("boom from nest-fastify"); }
    teapot(): never { throw new HttpException("client error from nest-fastify", 418); }
    async enqueue(req: { body: unknown }) { return { ...(await enqueue(jfast)), body: req.body }; }
  }
  const proto = WebController.prototype;
  const method = (name: keyof WebController) => Object.getOwnPropertyDescriptor(proto, name)!;
  Get("hello")(proto, "hello", method("hello"));
  Get("boom")(proto, "boom", method("boom"));
  Get("teapot")(proto, "teapot", method("teapot"));
  Post("enqueue")(proto, "enqueue", method("enqueue"));
  HttpCode(202)(proto, "enqueue", method("enqueue"));
  Req()(proto, "enqueue", 0);
  Controller()(WebController);
  class AppModule implements OnApplicationShutdown {
    onApplicationShutdown() { jfast.logger.info("nest shutdown hook ran"); }
  }
  Module({ controllers: [WebController] })(AppModule);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: ["error"] });
  app.getHttpAdapter().getInstance().addHook("preHandler", jfast.middleware.fastify());
  return app;
}
`,
};

const ERROR_RESPONSES: Record<string, (body: string, type: string) => void> = {
  hono: (body) => expect(body).toBe("Internal Server Error"),
  // finalhandler's page: the stack outside production, "Internal Server Error" in it
  express: (body, type) => {
    expect(type).toContain("text/html");
    expect(body).toContain("<title>Error</title>");
  },
  koa: (body) => expect(body).toBe("Internal Server Error"),
  fastify: (body) => expect(JSON.parse(body)).toMatchObject({ statusCode: 500, error: "Internal Server Error", message: "boom from fastify" }),
  nest: (body) => expect(JSON.parse(body)).toEqual({ statusCode: 500, message: "Internal server error" }),
  "nest-fastify": (body) => expect(JSON.parse(body)).toEqual({ statusCode: 500, message: "Internal server error" }),
};

const CLOSE_LINES: Record<string, string | null> = { hono: null, express: null, koa: null, fastify: "fastify onClose ran", nest: "nest shutdown hook ran", "nest-fastify": "nest shutdown hook ran" };

const running: DetachedJfast[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const p of running.splice(0)) p.killGroup();
  for (const remove of cleanups.splice(0)) await remove();
});

/** `jfast <command>` in its own process group (killed whole after the test), on a free port. */
async function start(command: "start" | "dev", server: string): Promise<DetachedJfast & { base: string }> {
  const service = await createServiceRoot({ "jfast.toml": TOML, "modules/demo/tasks.ts": TASKS, "enqueue.ts": ENQUEUE, "server.ts": server });
  cleanups.push(service.remove);
  const p = startDetached([command, "--root", service.root, "--grace", "2"], { cwd: service.root, env: { PORT: "0", HOST: "", JFAST_ENV: "development" } });
  running.push(p);
  await p.waitFor('"msg":"http listening"');
  return Object.assign(p, { base: listeningUrl(p.output()) });
}

describe.each(Object.keys(SERVERS))("jfast start serving a %s app", (framework) => {
  it("serves the app's routes and /ready, logs a failure with its request id, carries the tenant into jobs, stops on SIGTERM", async () => {
    const app = await start("start", SERVERS[framework]!);
    expect(app.output()).toContain(`"framework":"${framework.replace("-fastify", "")}"`);

    const hello = await fetch(`${app.base}/hello`);
    expect(hello.status).toBe(200);
    expect(await hello.json()).toEqual({ hello: framework });
    expect(hello.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    const ready = await fetch(`${app.base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ok" });

    const requestId = `boom-${framework}-${Date.now()}`;
    const boom = await fetch(`${app.base}/boom`, { headers: { "x-request-id": requestId } });
    expect(boom.status).toBe(500);
    ERROR_RESPONSES[framework]!(await boom.text(), boom.headers.get("content-type") ?? "");
    await app.waitFor(new RegExp(`"request_id":"${requestId}".*"msg":"request failed"`), 5_000);
    const failure = app
      .output()
      .split("\n")
      .find((l) => l.includes('"msg":"request failed"') && l.includes(requestId));
    expect(failure, app.output()).toBeDefined();
    expect(JSON.parse(failure!)).toMatchObject({ level: "error", request_id: requestId, path: "/boom" });
    expect(failure).toContain(`boom from ${framework}`);

    // A 4xx the app raised on purpose is the framework's answer, not a failure: no error line.
    expect((await fetch(`${app.base}/teapot`)).status).toBe(418);
    expect(app.output()).not.toContain(`client error from ${framework}`);

    const enqueued = await fetch(`${app.base}/enqueue`, {
      method: "POST",
      headers: { "x-tenant-id": "acme", "content-type": "application/json" },
      body: framework === "koa" ? undefined : JSON.stringify({ order: 42 }),
    });
    expect(enqueued.status).toBe(202);
    const job = (await enqueued.json()) as { tenant_id: string; request_id: string; body?: unknown };
    expect(job.tenant_id).toBe("acme");
    expect(job.request_id).toBe(enqueued.headers.get("x-request-id"));
    if (framework !== "koa") expect(job.body).toEqual({ order: 42 });

    process.kill(app.pid, "SIGTERM");
    expect(await app.exited).toBe(0);
    expect(app.output()).toContain('"msg":"stopped"');
    const closeLine = CLOSE_LINES[framework];
    if (closeLine) expect(app.output()).toContain(closeLine);
  });
});

describe("jfast start and dev with other app shapes", () => {
  it("serves a plain node:http (req, res) listener under jfast dev, and logs one that throws", async () => {
    const app = await start(
      "dev",
      `
import type { IncomingMessage, ServerResponse } from "node:http";
export function createApp() {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/boom") throw new Error("boom from a listener");
    res.setHeader("content-type", "text/plain");
    res.end("plain " + req.url);
  };
}
`,
    );
    expect(await (await fetch(`${app.base}/hi`)).text()).toBe("plain /hi");
    expect((await fetch(`${app.base}/ready`)).status).toBe(200);
    const boom = await fetch(`${app.base}/boom`, { headers: { "x-request-id": "plain-boom" } });
    expect(boom.status).toBe(500);
    expect(await boom.text()).toBe("Internal Server Error");
    await app.waitFor(/"request_id":"plain-boom".*"msg":"request failed"/, 5_000);
    process.kill(app.pid, "SIGTERM");
    expect(await app.exited).toBe(0);
  });

  it("serves koa.callback() as a Node listener", async () => {
    const app = await start(
      "start",
      `
import Koa from "koa";
export function createApp() {
  const app = new Koa();
  app.use((ctx) => { ctx.body = "koa callback"; });
  return app.callback();
}
`,
    );
    expect(await (await fetch(`${app.base}/x`)).text()).toBe("koa callback");
    expect(app.output()).toContain('"framework":"node"');
    process.kill(app.pid, "SIGTERM");
    expect(await app.exited).toBe(0);
  });

  it("hands a Hono app the Node request and response in c.env, as @hono/node-server does (a Node handler such as the dashboard mounts there)", async () => {
    const app = await start(
      "start",
      `
import { Hono } from "hono";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
export function createApp() {
  const app = new Hono();
  app.get("/node/*", (c) => {
    c.env.outgoing.setHeader("content-type", "text/plain");
    c.env.outgoing.end("answered by a Node handler: " + c.env.incoming.url);
    return RESPONSE_ALREADY_SENT;
  });
  return app;
}
`,
    );
    const answer = await fetch(`${app.base}/node/x?y=1`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("answered by a Node handler: /node/x?y=1");
    process.kill(app.pid, "SIGTERM");
    expect(await app.exited).toBe(0);
  });

  it("refuses an app it does not recognise, naming the shapes it accepts", async () => {
    const service = await createServiceRoot({ "jfast.toml": TOML, "server.ts": `export function createApp() { return { listen() {} }; }` });
    cleanups.push(service.remove);
    const p = startDetached(["start", "--root", service.root], { cwd: service.root, env: { PORT: "0", HOST: "" } });
    running.push(p);
    const code = await p.exited;
    const output = p.output();
    expect(code).toBe(1);
    expect(output).toContain("createApp() in server.ts returned object, not an HTTP app jfast can serve");
    expect(output).toMatch(/Express.*Koa.*Fastify.*Nest/s);
    expect(output).toContain("jfast docs getting-started#your-web-framework");
  });
});

/** A Nest app whose request context comes from jfast.middleware.nest() (a module), on Express or on Fastify. */
const NEST_MODULE = (platform: "express" | "fastify") => `
import { Controller, Module, Post, Req } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
${platform === "fastify" ? 'import { FastifyAdapter } from "@nestjs/platform-fastify";' : ""}
import type { Jfast } from "@jfast/runtime";
import { enqueue } from "./enqueue.ts";

export async function createApp(jfast: Jfast) {
  class WebController {
    async enqueue(req: { body: unknown }) { return { ...(await enqueue(jfast)), body: req.body }; }
    async later(req: { body: unknown }) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { ...(await enqueue(jfast)), body: req.body };
    }
  }
  const proto = WebController.prototype;
  Post("enqueue")(proto, "enqueue", Object.getOwnPropertyDescriptor(proto, "enqueue")!);
  Req()(proto, "enqueue", 0);
  Post("later")(proto, "later", Object.getOwnPropertyDescriptor(proto, "later")!);
  Req()(proto, "later", 0);
  Controller()(WebController);
  class AppModule {}
  Module({ imports: [jfast.middleware.nest()], controllers: [WebController] })(AppModule);
  return NestFactory.create(AppModule, ${platform === "fastify" ? "new FastifyAdapter(), " : ""}{ logger: ["error"] });
}
`;

describe.each(["express", "fastify"] as const)("jfast.middleware.nest(): the request context in a Nest app on %s", (platform) => {
  it("runs each route handler in its request's context: the tenant and request id reach the jobs it enqueues, after a JSON body and an await", async () => {
    const app = await start("start", NEST_MODULE(platform));
    for (const path of ["/enqueue", "/later"]) {
      const tenant = `acme-${platform}${path.replace("/", "-")}`;
      const answer = await fetch(`${app.base}${path}`, { method: "POST", headers: { "x-tenant-id": tenant, "content-type": "application/json" }, body: JSON.stringify({ order: 7 }) });
      expect(answer.status, app.output()).toBe(201);
      const job = (await answer.json()) as { tenant_id: string; request_id: string; body: unknown };
      expect(job).toEqual({ tenant_id: tenant, request_id: answer.headers.get("x-request-id"), body: { order: 7 } });
    }
    // Without the header, no tenant: one request's context does not leak into the next.
    const plain = await fetch(`${app.base}/enqueue`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(((await plain.json()) as { tenant_id: string | null }).tenant_id).toBeNull();
    process.kill(app.pid, "SIGTERM");
    expect(await app.exited).toBe(0);
  });
});
