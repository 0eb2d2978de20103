// One process, one dashboard under /ops, mounted the documented way in each Node web framework beside the host's
// own routes (among them /login and /api/ping, which the dashboard must leave alone). Used by
// e2e/dashboard-handler.test.ts and e2e/dashboard/base-path.spec.ts. Prints "hosts listening <json of ports>".
import "reflect-metadata";
import http from "node:http";
import { pathToFileURL } from "node:url";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { serve } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import Koa from "koa";
import { Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";

const { createDashboardHandler } = await import(pathToFileURL(process.env.DASHBOARD_MODULE).href);
const frameworks = (process.env.FRAMEWORKS ?? "http,express,fastify,koa,hono,nest").split(",");
const dashboard = await createDashboardHandler({
  basePath: "/ops",
  services: JSON.parse(process.env.SERVICES ?? "[]"),
  users: JSON.parse(process.env.USERS ?? "[]"),
  secret: process.env.SECRET,
});

const own = (framework, path) => ({ host: framework, path });
const listen = (server) => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
const ports = {};

if (frameworks.includes("http")) {
  ports.http = await listen(
    http.createServer((req, res) => {
      if (dashboard.owns(req.url)) return dashboard(req, res);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(own("http", req.url)));
    }),
  );
}

if (frameworks.includes("express")) {
  const app = express();
  app.use("/ops", dashboard);
  app.use(express.json());
  app.get("/login", (req, res) => res.json(own("express", req.path)));
  app.get("/api/ping", (req, res) => res.json(own("express", req.path)));
  ports.express = await listen(http.createServer(app));
}

if (frameworks.includes("fastify")) {
  const app = Fastify();
  // onRequest runs before Fastify reads the body: the dashboard reads its own.
  app.addHook("onRequest", (request, reply, done) => {
    if (!dashboard.owns(request.raw.url)) return done();
    reply.hijack();
    dashboard(request.raw, reply.raw);
  });
  app.get("/login", async (request) => own("fastify", request.url));
  app.get("/api/ping", async (request) => own("fastify", request.url));
  await app.listen({ port: 0, host: "127.0.0.1" });
  ports.fastify = app.server.address().port;
}

if (frameworks.includes("koa")) {
  const app = new Koa();
  app.use(async (ctx, next) => {
    if (!dashboard.owns(ctx.url)) return next();
    ctx.respond = false;
    dashboard(ctx.req, ctx.res);
  });
  app.use(async (ctx) => {
    ctx.body = own("koa", ctx.path);
  });
  ports.koa = await listen(http.createServer(app.callback()));
}

if (frameworks.includes("hono")) {
  const app = new Hono();
  const mounted = (c) => {
    dashboard(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
  app.all("/ops", mounted);
  app.all("/ops/*", mounted);
  app.get("/login", (c) => c.json(own("hono", c.req.path)));
  app.get("/api/ping", (c) => c.json(own("hono", c.req.path)));
  ports.hono = await new Promise((resolve) => serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port)));
}

if (frameworks.includes("nest")) {
  class AppModule {}
  Module({})(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  app.use("/ops", dashboard);
  const adapter = app.getHttpAdapter();
  adapter.get("/login", (req, res) => res.json(own("nest", req.path)));
  adapter.get("/api/ping", (req, res) => res.json(own("nest", req.path)));
  await app.listen(0, "127.0.0.1");
  ports.nest = app.getHttpServer().address().port;
}

console.log(`hosts listening ${JSON.stringify(ports)}`);
