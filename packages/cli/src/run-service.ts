import type { AppWorker, Jfast } from "@jfast/runtime";
import type { CommandIO } from "./command.js";
import { listen } from "./http-server.js";
import { openService, toFetchHandler, type FetchHandler } from "./service.js";
import { watchShutdownSignals } from "./shutdown.js";

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
    if (params.http) {
      const app = entry?.createApp ? toFetchHandler(await entry.createApp(jfast), entry.file!) : null;
      const host = params.host ?? jfast.config.host ?? undefined;
      http = await listen({ fetch: composeFetch(jfast, app), port: jfast.config.port, ...(host ? { hostname: host } : {}) });
      jfast.logger.info("http listening", {
        // What the socket is bound to; a wildcard address is reachable from other machines, so it says so.
        url: `http://${http.everyInterface ? "localhost" : urlHost(http.address)}:${http.port}`,
        address: http.address,
        interfaces: http.everyInterface ? "every interface: reachable from other machines" : "this address only",
        app: app ? entry!.file : null,
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

    const signal = await signals.signalled;
    jfast.logger.info(`${signal}: shutting down`, {
      running_jobs: worker?.activeJobs.length ?? 0,
      grace_seconds: params.graceMs / 1000,
      hint: worker ? "send the signal again to release running jobs at once" : undefined,
    });
    await Promise.all([http?.close(params.graceMs), worker?.stop({ graceMs: params.graceMs })]);
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
 * jfast's own routes (/ready, /queue/stats, and whatever the runtime adds under /jfast/) answer first; any
 * path they do not know (404) goes to the service's app.
 */
export function composeFetch(jfast: Jfast, app: FetchHandler | null): FetchHandler {
  return async (request) => {
    const own = await jfast.fetch(request);
    if (own.status !== 404 || !app) return own;
    return app(request);
  };
}

function urlHost(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}
