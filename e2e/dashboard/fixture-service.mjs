// An example-like service for the dashboard's browser tests, built only from @jfast/runtime's public API.
// FIXTURE_ROOT holds its jfast.toml, contracts.toml and modules/ (written by the test); PORT is where it listens.
//   POST /fail?count=N&task=billing.charge   enqueues N jobs that fail until POST /fix (&invoice=X sets the
//                                             invoice of a single job; every job carries a traceparent)
//   POST /fix                                 makes them succeed from now on (what a deploy of the fix does)
//   POST /publish?type=parcel.sent&key=K      publishes an event to the "parcels" Kafka topic (with Kafka on)
// Everything else goes to jfast.routes(): /ready, /queue/stats and the admin API under /jfast/admin.
import { randomBytes } from "node:crypto";
import http from "node:http";
import { createJfast, Event, Job } from "@jfast/runtime";

const root = process.env.FIXTURE_ROOT;
const port = Number(process.env.PORT);
globalThis.__fixtureBroken = true;

const jfast = await createJfast({ root });
await jfast.start();
const worker = jfast.createWorker({ concurrency: 4 });
worker.start();
const routes = jfast.routes();

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://fixture");
  if (req.method === "POST" && url.pathname === "/fail") {
    const count = Number(url.searchParams.get("count") ?? "1");
    const task = url.searchParams.get("task") ?? `${jfast.config.service.name}.charge`;
    const invoice = url.searchParams.get("invoice");
    const jobs = Array.from(
      { length: count },
      (_, i) =>
        new Job({
          task,
          payload: { invoice: invoice ?? `inv-${Date.now()}-${i}`, card_number: "4242424242424242" },
          tenantId: url.searchParams.get("tenant") ?? "acme",
          // As if enqueued inside a traced request: the dashboard shows (and links) this trace id.
          trace: { traceparent: `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01` },
        }),
    );
    await jfast.require("queue").enqueue(jobs);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ids: jobs.map((j) => j.id) }));
    return;
  }
  if (req.method === "POST" && url.pathname === "/publish") {
    const key = url.searchParams.get("key") ?? "parcel-1";
    await jfast.require("events").publish("parcels", new Event({ type: url.searchParams.get("type") ?? "parcel.sent", data: { id: key }, key }));
    res.end("published");
    return;
  }
  if (req.method === "POST" && url.pathname === "/fix") {
    globalThis.__fixtureBroken = false;
    res.end("fixed");
    return;
  }
  routes(req, res);
});

server.listen(port, "127.0.0.1", () => process.stdout.write(`listening on ${port}\n`));

async function shutdown() {
  server.close();
  await worker.stop({ graceMs: 0 });
  await jfast.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
