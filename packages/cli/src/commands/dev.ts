import { MAX_CONCURRENCY } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { runService } from "../run-service.js";
import { resolveRoot } from "../service.js";
import { watchAndRestart } from "../watch.js";

export default defineCommand({
  name: "dev",
  summary: "run the service's HTTP API and a worker in one process (--watch: restart on changes)",
  description: `
Starts the service in <root> for development: its HTTP API and a worker in one process.

The API listens on PORT when set, else on [service] base_port, at 127.0.0.1 (this machine only) unless
--host or HOST says otherwise; in production (JFAST_ENV=production) on every interface. It serves jfast's routes (GET /ready,
GET /queue/stats, the admin API) and, for every other path, the app returned by createApp(jfast) exported
from <root>/server.ts (or app.ts): Hono or any fetch handler, Express, Koa, Fastify, a Nest application, or a
Node (req, res) listener (jfast docs getting-started#your-web-framework). Shutdown on SIGTERM/SIGINT works
as for \`jfast worker\`.

--watch starts it again whenever a file of the service changes (.ts, .js, .json, jfast.toml, .sql;
node_modules, .jfast and dist are ignored). In production run \`jfast start\` and \`jfast worker\` instead.`,
  flags: {
    worker: {
      type: "boolean",
      negatable: true,
      default: true,
      description: "leave the worker out: serve the API only (run `jfast worker` separately)",
    },
    host: {
      type: "string",
      placeholder: "ADDRESS",
      description: "the address to listen on, e.g. 0.0.0.0 for every interface (default: HOST, else 127.0.0.1; every interface in production)",
    },
    concurrency: {
      type: "integer",
      min: 1,
      max: MAX_CONCURRENCY,
      maxReason: "the same cap as [plugin.queue] concurrency; run more workers for more",
      placeholder: "N",
      description: "jobs the worker runs at once (default: [plugin.queue] concurrency)",
    },
    grace: {
      type: "number",
      min: 0,
      default: 25,
      placeholder: "SECONDS",
      description: "on SIGTERM, how long running jobs and requests get to finish",
    },
    watch: {
      type: "boolean",
      description: "restart when a file of the service changes",
    },
    root: ROOT_FLAG,
  },
  examples: ["jfast dev", "jfast dev --watch", "PORT=8080 jfast dev --no-worker", "jfast dev --host 0.0.0.0", "jfast dev --root apps/example"],
  docs: "jfast docs cli#jfast-dev",
  run({ flags, io }) {
    const root = resolveRoot(flags.root, io.cwd);
    if (flags.watch) {
      const args = ["--root", root, "--grace", String(flags.grace)];
      if (!flags.worker) args.push("--no-worker");
      if (flags.concurrency !== undefined) args.push("--concurrency", String(flags.concurrency));
      if (flags.host !== undefined) args.push("--host", flags.host);
      return watchAndRestart({ root, args, io });
    }
    return runService({
      root,
      worker: flags.worker,
      http: true,
      host: flags.host,
      concurrency: flags.concurrency,
      graceMs: Math.round(flags.grace * 1000),
      io,
    });
  },
});
