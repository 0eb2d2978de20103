// An example-like service for the dashboard's browser tests, built only from @jfast/runtime's public API.
// FIXTURE_ROOT holds its jfast.toml, contracts.toml and modules/ (written by the test); PORT is where it listens.
//   POST /fail?count=N&task=billing.charge   enqueues N jobs that fail until POST /fix (&invoice=X sets the
//                                             invoice of a single job, &tenant=T its tenant, &delay=S schedules it
//                                             S seconds from now, &request=R its request id; every job carries a
//                                             traceparent)
//   POST /flow?name=N&hold=1                  starts a flow: charge (<service>.ping) → ship (<service>.charge, failing
//                                             until POST /fix) → notify (<service>.ping); &hold=1 makes charge due in
//                                             10 minutes, so the flow stays running; answers { flowId, jobIds }
//   POST /nap?ms=N                            enqueues a <service>.ping job that runs N ms, reporting 40 % progress;
//                                             answers { id }
//   POST /fix                                 makes them succeed from now on (what a deploy of the fix does)
//   POST /break                               makes them fail again (a regression)
//   POST /publish?type=parcel.sent&key=K      publishes an event to the "parcels" Kafka topic (with Kafka on)
//   POST /schedule-history?name=S&days=N      records schedule S's last tick N days ago (09:30 UTC), as a replica
//                                             left it before the service was down since
//   POST /outbox-orphan                       writes an outbox row for a queue this service does not have, as a
//                                             process configured with another queue name would (it dies at once)
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
          // &delay=S: scheduled S seconds from now (the jobs page's scheduled tab).
          ...(url.searchParams.get("delay") ? { delayMs: Number(url.searchParams.get("delay")) * 1000 } : {}),
          // As if enqueued inside a traced request: the dashboard shows (and links) this trace id.
          trace: { traceparent: `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01` },
          // &request=R: the request it was made in (the Timeline page finds it, and the request's other jobs, by it).
          ...(url.searchParams.get("request") ? { requestId: url.searchParams.get("request") } : {}),
        }),
    );
    await jfast.require("queue").enqueue(jobs);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ids: jobs.map((j) => j.id) }));
    return;
  }
  if (req.method === "POST" && url.pathname === "/nap") {
    const job = new Job({ task: `${jfast.config.service.name}.ping`, payload: { napMs: Number(url.searchParams.get("ms") ?? "60000") } });
    await jfast.require("queue").enqueue(job);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ id: job.id }));
    return;
  }
  if (req.method === "POST" && url.pathname === "/flow") {
    const service = jfast.config.service.name;
    const ping = (delayMs) => new Job({ task: `${service}.ping`, payload: {}, ...(delayMs ? { delayMs } : {}) });
    const created = await jfast.require("queue").flow({
      name: url.searchParams.get("name") ?? "order.fulfil",
      steps: {
        charge: ping(url.searchParams.get("hold") === "1" ? 600_000 : 0),
        ship: { job: new Job({ task: `${service}.charge`, payload: { invoice: `flow-${Date.now()}`, card_number: "4242424242424242" } }), after: ["charge"] },
        notify: { job: ping(0), after: ["ship"] },
      },
    });
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(created));
    return;
  }
  if (req.method === "POST" && url.pathname === "/publish") {
    const key = url.searchParams.get("key") ?? "parcel-1";
    await jfast.require("events").publish("parcels", new Event({ type: url.searchParams.get("type") ?? "parcel.sent", data: { id: key }, key }));
    res.end("published");
    return;
  }
  if (req.method === "POST" && url.pathname === "/schedule-history") {
    const days = Number(url.searchParams.get("days") ?? "2");
    const now = new Date();
    const tick = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - days, 9, 30));
    const database = jfast.require("database");
    await database.transaction((tx) =>
      database.executorFor(tx).query("INSERT INTO jfast_schedules (name, tick, claimed_at) VALUES ($1, $2, $2) ON CONFLICT DO NOTHING", [url.searchParams.get("name"), tick]),
    );
    res.end(tick.toISOString());
    return;
  }
  if (req.method === "POST" && url.pathname === "/outbox-orphan") {
    // The relay here can never deliver a job for queue "legacy.jobs": it sets the row aside as dead at once.
    const database = jfast.require("database");
    const job = new Job({ task: `${jfast.config.service.name}.charge`, payload: { invoice: "orphan" } });
    const id = `job:legacy.jobs:${job.id}`;
    await database.transaction((tx) =>
      database.executorFor(tx).query("INSERT INTO jfast_outbox (id, kind, destination, body) VALUES ($1, 'job', 'legacy.jobs', $2::json)", [id, JSON.stringify(job.toJSON())]),
    );
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ id }));
    return;
  }
  if (req.method === "POST" && url.pathname === "/break") {
    globalThis.__fixtureBroken = true;
    res.end("broken");
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
