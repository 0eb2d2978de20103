import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, afterEach, describe, expect, it } from "vitest";
import { listeningUrl, startDetached, type DetachedJfast } from "./detached-jfast.js";
import { REPO_ROOT } from "./jfast-process.js";
import { PG_URL, sql } from "./services.js";

// The runnable examples under apps/stacks/<framework>, started as their README says (`jfast dev` in the
// directory, so tsx reads its tsconfig.json): a route answers, /ready answers beside it, and a job enqueued in a
// request runs in the worker with that request's tenant. They keep their jobs in PostgreSQL (their transaction
// routes use the same database): a throwaway database of their own, shared by all.
const STACKS = path.join(REPO_ROOT, "apps/stacks");
const frameworks = readdirSync(STACKS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const DATABASE = `cli_stacks_${randomBytes(4).toString("hex")}`;
const DATABASE_URL = `${PG_URL.slice(0, PG_URL.lastIndexOf("/"))}/${DATABASE}`;
beforeAll(async () => {
  await sql(`CREATE DATABASE "${DATABASE}"`);
});
afterAll(async () => {
  await sql(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`);
});

const running: DetachedJfast[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.killGroup();
});

it("has a stack per framework jfast documents", () => {
  expect(frameworks.sort()).toEqual(["express", "fastify", "hono", "koa", "nest"]);
});

describe.each(frameworks)("apps/stacks/%s", (framework) => {
  it("serves its routes beside /ready and runs the job a request enqueued with the request's tenant", async () => {
    const p = startDetached(["dev", "--grace", "2"], { cwd: path.join(STACKS, framework), env: { PORT: "0", HOST: "", JFAST_ENV: "development", DATABASE_URL } });
    running.push(p);
    await p.waitFor('"msg":"worker started"');
    const base = listeningUrl(p.output());

    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: framework });
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const charged = await fetch(`${base}/orders/42/charge`, { method: "POST", headers: { "x-tenant-id": "acme", "content-type": "application/json" }, body: "{}" });
    expect(charged.status).toBe(202);
    const { job_id } = (await charged.json()) as { job_id: string };
    await p.waitFor(new RegExp(`"tenant_id":"acme","request_id":"${charged.headers.get("x-request-id")}","job_id":"${job_id}".*"msg":"order charged"`), 15_000);

    process.kill(p.pid, "SIGTERM");
    expect(await p.exited).toBe(0);
  });
});
