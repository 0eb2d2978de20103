// The service the dashboard load benchmark watches, built only from @jfast/runtime's public API (like
// e2e/dashboard/fixture-service.mjs). FIXTURE_ROOT holds its jfast.toml, contracts.toml and modules/ (written by
// bench/dashboard-load.ts); PORT is where it listens. It runs no worker: the seeded jobs stay as seeded, so
// every load of every page reads the same data and only the admin API's reads are measured.
import http from "node:http";
import { createJfast } from "@jfast/runtime";

const jfast = await createJfast({ root: process.env.FIXTURE_ROOT });
await jfast.start();
const routes = jfast.routes();
const server = http.createServer((req, res) => routes(req, res));
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write(`listening on ${process.env.PORT}\n`));

async function shutdown() {
  server.close();
  await jfast.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
