import { randomUUID } from "node:crypto";
import { getRequestListener } from "@hono/node-server";
import type { AppWorker, Jfast } from "@jfast/runtime";
import type { CommandIO } from "./command.js";
import { flushCompileCache } from "./compile-cache.js";
import { listen } from "./http-server.js";
import { openService } from "./service.js";
import { watchShutdownSignals } from "./shutdown.js";
import { requestIdOf, toWebApp, type NodeListener, type WebApp } from "./web-app.js";

export interface RunServiceParams {
  root: string;
  /** Run a worker in this process. */
  worker: boolean;
  /** Serve the HTTP API (jfast routes + the service's createApp) on config.port. */
  http: boolean;
  /** `--host`: the address to listen on, over config.host (HOST, else loopback outside production). */
  host: string | undefined;
  concurrency: number | undefined;
  /** `jfast worker --queues`: the named queues to run (default every one not paused). */
  queues?: readonly string[] | undefined;
  graceMs: number;
  io: CommandIO;
}

/**
 * The long-running part of `jfast worker` and `jfast dev`: build the app, serve and/or consume until a
 * signal, then shut down in order (stop accepting, let running jobs finish within the grace, release the
 * rest, close connections). Resolves with the exit code.
 */
export async function runService(params: RunServiceParams): Promise<number> {
  let worker: AppWorker | null = null;
  let jfast: Jfast | null = null;
  const signals = watchShutdownSignals({
    onSecond: (signal) => {
      if (!worker) process.exit(0);
      jfast?.logger.warn(`${signal} again: not waiting any longer; running jobs are released to the queue now`);
      worker.stopNow();
    },
    onThird: (signal) => {
      process.stderr.write(`jfast: ${signal} a third time: exiting without a clean shutdown (leases bring unreleased jobs back)\n`);
    },
  });
  try {
    const opened = await openService({ root: params.root, entry: true });
    jfast = opened.jfast;
    const { entry } = opened;
    if (signals.received) {
      await jfast.stop();
      return 0;
    }

    let http: Awaited<ReturnType<typeof listen>> | null = null;
    let app: WebApp | null = null;
    if (params.http) {
      app = entry?.createApp ? await toWebApp({ app: await entry.createApp(jfast), file: entry.file!, logger: jfast.logger }) : null;
      const host = params.host ?? jfast.config.host ?? undefined;
      http = await listen({ listener: composeListener(jfast, app), port: jfast.config.port, ...(host ? { hostname: host } : {}) });
      jfast.logger.info("http listening", {
        // What the socket is bound to; a wildcard address is reachable from other machines, so it says so.
        url: `http://${http.everyInterface ? "localhost" : urlHost(http.address)}:${http.port}`,
        address: http.address,
        interfaces: http.everyInterface ? "every interface: reachable from other machines" : "this address only",
        app: app ? entry!.file : null,
        framework: app?.kind ?? null,
        routes: ["/ready", "/queue/stats"],
      });
      if (!app) jfast.logger.info("no server.ts exporting createApp(jfast): serving only jfast's routes", { docs: "jfast docs cli#the-service-entry-file" });
    }
    if (params.worker) {
      worker = jfast.createWorker({
        ...(params.concurrency === undefined ? {} : { concurrency: params.concurrency }),
        ...(params.queues === undefined ? {} : { queues: params.queues }),
      });
      worker.start();
      const tasks = jfast.tasks.names();
      jfast.logger.info("worker started", {
        worker_id: worker.id,
        concurrency: params.concurrency ?? jfast.config.queue?.concurrency,
        grace_seconds: params.graceMs / 1000,
        backend: jfast.config.queue?.backend,
        queue: jfast.config.queue?.name,
        queues: worker.queues,
        tasks,
      });
      if (tasks.length === 0) jfast.logger.warn("no tasks registered: add modules/<name>/tasks.ts", { docs: "jfast docs tasks#discovery" });
    }
    // Everything start-up compiles is now in Node's compile cache, for the next start even if this process is killed.
    flushCompileCache();

    const signal = await signals.signalled;
    jfast.logger.info(`${signal}: shutting down`, {
      running_jobs: worker?.activeJobs.length ?? 0,
      grace_seconds: params.graceMs / 1000,
      hint: worker ? "send the signal again to release running jobs at once" : undefined,
    });
    await Promise.all([http?.close(params.graceMs), worker?.stop({ graceMs: params.graceMs })]);
    // The framework's own shutdown (Fastify's onClose hooks, Nest's lifecycle) runs once no request is in flight.
    await app?.close().catch((error: unknown) => jfast?.logger.error("the web app failed to close", { error: String(error) }));
    await jfast.stop();
    jfast.logger.info("stopped", { processed: worker?.processedCount ?? 0 });
    return 0;
  } catch (error) {
    await jfast?.stop().catch(() => undefined);
    throw error;
  } finally {
    signals.dispose();
  }
}

/**
 * jfast's own routes answer first: everything under /jfast/ (the admin API), and any GET or HEAD the runtime
 * knows (/ready, /queue/stats, /metrics); a 404 from jfast passes the untouched request to the service's app.
 * Every request gets an x-request-id (the client's, else a new one): the context middleware and the error lines
 * use it, and the response carries it.
 */
export function composeListener(jfast: Jfast, app: WebApp | null): NodeListener {
  const own = getRequestListener((request) => jfast.fetch(request));
  return (req, res) => {
    let requestId = requestIdOf(req.headers);
    if (!requestId) {
      requestId = randomUUID();
      req.headers["x-request-id"] = requestId;
    }
    res.setHeader("x-request-id", requestId);
    const path = (req.url ?? "/").split("?")[0]!;
    if (!app || path === "/jfast" || path.startsWith("/jfast/")) return void own(req, res);
    // jfast's GET routes read only the path; a request-target that is not a path ("*", absolute-form) is the app's.
    if ((req.method !== "GET" && req.method !== "HEAD") || !path.startsWith("/") || path.startsWith("//")) return app.listener(req, res);
    let request: Request;
    try {
      request = new Request(`http://localhost${path}`, { method: req.method });
    } catch {
      return app.listener(req, res);
    }
    jfast.fetch(request).then(
      async (response) => {
        if (response.status === 404) return app.listener(req, res);
        const body = req.method === "HEAD" ? undefined : Buffer.from(await response.arrayBuffer());
        res.statusCode = response.status;
        response.headers.forEach((value, key) => res.setHeader(key, value));
        res.end(body);
      },
      (error: unknown) => {
        jfast.logger.error("request failed", { request_id: requestId, method: req.method, path, error: String(error) });
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.end("Internal Server Error");
      },
    );
  };
}
function urlHost(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}
