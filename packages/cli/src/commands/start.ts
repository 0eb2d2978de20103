import { defineCommand, ROOT_FLAG } from "../command.js";
import { runService } from "../run-service.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "start",
  summary: "serve the service's HTTP API in production (no worker: run `jfast worker` beside it)",
  description: `
Starts the service in <root> for production: its HTTP API, without a worker. Run \`jfast worker\` as its own
process (container, Deployment) next to it, from the same code and jfast.toml.

The API listens on PORT when set, else on [service] base_port: on every interface in production
(JFAST_ENV=production, as the generated manifests set it), else on 127.0.0.1, unless --host or HOST says
otherwise. It serves jfast's routes (GET /ready,
GET /queue/stats, the admin API) and, for every other path, the app returned by createApp(jfast) exported
from <root>/server.ts (or app.ts): Hono or any fetch handler, Express, Koa, Fastify, a Nest application, or
a Node (req, res) listener (jfast docs getting-started#your-web-framework). The service's TypeScript runs
through tsx, or compile it and point server.ts/modules at the output (jfast docs getting-started#production).

On SIGTERM or SIGINT it stops accepting connections, gives requests in flight --grace seconds, closes the
app (Fastify's and Nest's own close()) and then jfast.
Run the binary itself (node_modules/.bin/jfast) under a supervisor, not \`npx jfast\`: npx does not pass
SIGTERM on.`,
  flags: {
    host: {
      type: "string",
      placeholder: "ADDRESS",
      description: "the address to listen on (default: HOST, else every interface in production and 127.0.0.1 elsewhere)",
    },
    grace: {
      type: "number",
      min: 0,
      default: 25,
      placeholder: "SECONDS",
      description: "on SIGTERM, how long requests in flight get to finish",
    },
    root: ROOT_FLAG,
  },
  examples: ["jfast start", "PORT=8080 jfast start", "node_modules/.bin/jfast start --root /app"],
  docs: "jfast docs cli#jfast-start",
  run({ flags, io }) {
    return runService({
      root: resolveRoot(flags.root, io.cwd),
      worker: false,
      http: true,
      host: flags.host,
      concurrency: undefined,
      graceMs: Math.round(flags.grace * 1000),
      io,
    });
  },
});
