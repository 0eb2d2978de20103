import { createServer, connect, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { startBillingApp, type BillingApp } from "./billing-app.js";
import { eventually, PG_HOST, PG_PORT, uniqueSchema } from "./pg-test-env.js";

/**
 * A TCP relay in front of the real server: closing it is "the database went away" for the app behind
 * it, without touching the server the other tests use.
 */
class Relay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async open(port = 0): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(PG_PORT, PG_HOST);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

describe("postgres: /ready", () => {
  let app: BillingApp | null = null;
  let relay: Relay | null = null;
  afterEach(async () => {
    // Back up if a test failed while it was down, so the app can stop cleanly.
    await relay?.open(relay.port).catch(() => undefined);
    await app?.stop();
    await relay?.close();
    app = null;
    relay = null;
  });

  const ready = async (a: BillingApp) => {
    const response = await a.jfast.fetch(new Request("http://service/ready"));
    return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, any> } };
  };

  it("reports the dead count and is degraded while it is above zero", async () => {
    app = await startBillingApp({ schema: uniqueSchema("ready") });
    const initial = await ready(app);
    expect(initial.body.checks.queue).toMatchObject({ status: "ok", backend: "postgres", dead: 0 });

    const queue = app.jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "billing.always_fails", payload: {} });
    await queue.enqueue(job);
    app.worker();
    await eventually("the job in dead letters", async () => (await queue.backend.getJob({ id: job.id }))?.state === "dead");

    const after = await eventually("a degraded /ready", async () => {
      const r = await ready(app!);
      return r.body.status === "degraded" ? r : null;
    });
    expect(after.status).toBe(200);
    expect(after.body.checks.queue).toMatchObject({ status: "degraded", dead: 1 });
    expect(after.body.checks.queue.reason).toContain("jfast jobs dead");
  });

  it("is unavailable while the database cannot be reached, and recovers when it is back", async () => {
    relay = new Relay();
    await relay.open();
    app = await startBillingApp({ schema: uniqueSchema("ready"), url: `postgres://postgres@127.0.0.1:${relay.port}/test` });
    expect((await ready(app)).body.status).toBe("ok");

    await relay.close();
    const down = await eventually("an unavailable /ready", async () => {
      const r = await ready(app!);
      return r.body.status === "unavailable" ? r : null;
    });
    expect(down.status).toBe(503);
    expect(down.body.checks.queue).toMatchObject({ status: "unavailable", backend: "postgres" });
    expect(down.body.checks.queue.error).toMatch(/cannot use PostgreSQL at 127\.0\.0\.1:\d+\/test/);

    await relay.open(relay.port);
    await eventually("/ready back to ok", async () => (await ready(app!)).body.status === "ok");
  });

  it("in production answers each check's status only, unless [http] ready_details = true", async () => {
    relay = new Relay();
    await relay.open();
    app = await startBillingApp({
      schema: uniqueSchema("ready"),
      url: `postgres://postgres@127.0.0.1:${relay.port}/test`,
      config: { service: { environment: "production" } },
    });
    const queue = app.jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "billing.always_fails", payload: {} });
    await queue.enqueue(job);
    app.worker();
    await eventually("the job in dead letters", async () => (await queue.backend.getJob({ id: job.id }))?.state === "dead");
    const degraded = await eventually("a degraded /ready", async () => {
      const r = await ready(app!);
      return r.body.status === "degraded" ? r : null;
    });
    expect(degraded.status).toBe(200);
    expect(degraded.body).toEqual({ status: "degraded", checks: { queue: { status: "degraded" }, outbox: { status: "ok" } } });

    await relay.close();
    const down = await eventually("an unavailable /ready", async () => {
      const r = await ready(app!);
      return r.body.status === "unavailable" ? r : null;
    });
    expect(down.status).toBe(503);
    expect(Object.values(down.body.checks).every((check) => Object.keys(check).join() === "status")).toBe(true);
    expect(JSON.stringify(down.body)).not.toMatch(/127\.0\.0\.1|PostgreSQL|relay|dead|postgres/);

    await relay.open(relay.port);
    await app.stop();
    app = await startBillingApp({
      schema: uniqueSchema("ready"),
      config: { service: { environment: "production" }, http: { ready_details: true } },
    });
    const detailed = await ready(app);
    expect(detailed.body.checks.queue).toMatchObject({ status: "ok", backend: "postgres", dead: 0, ready: 0 });
  });
});
