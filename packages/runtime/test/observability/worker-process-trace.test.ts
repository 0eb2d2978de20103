// One trace across two processes: this test's process is the API (it writes a row and publishes order.placed
// through the outbox in one transaction), and a real `jfast worker` process — the CLI binary, run on a copy
// of the traced-shop service — runs the subscriber job and the mail job the subscriber enqueues. The worker
// exports its spans with OTLP/HTTP (`[plugin.telemetry] endpoint`) to a collector this test runs.
import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { parse, stringify } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { copyFixture, dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { flatten, renderTree, startCollector, type FlatSpan } from "./spans.js";

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const JFAST_BIN = path.join(REPO_ROOT, "packages/cli/bin/jfast.js");
const FIXTURE = fileURLToPath(new URL("../fixtures/traced-shop/", import.meta.url));

type Settings = Record<string, Record<string, unknown>>;

function merge(base: Record<string, any>, extra: Record<string, any>): Record<string, any> {
  const out = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    out[key] = value && typeof value === "object" && !Array.isArray(value) ? merge(base[key] ?? {}, value) : value;
  }
  return out;
}

/**
 * The traced-shop fixture as a service root the CLI runs: its own files (imports of "@jfast/runtime" resolve
 * through a node_modules link to the workspace's built runtime, as in a real service), with `plugin`
 * settings merged into its jfast.toml.
 */
async function serviceRoot(plugin: Settings): Promise<{ root: string; remove(): Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-traced-shop-cli-"));
  await cp(FIXTURE, root, { recursive: true });
  await symlink(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
  const toml = parse(await readFile(path.join(root, "jfast.toml"), "utf8"));
  await writeFile(path.join(root, "jfast.toml"), stringify(merge(toml, { plugin })));
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const REQUEST_SPAN = "00f067aa0ba902b7";

const BACKENDS = {
  postgres: () => ({ queueName: "jfast.jobs", queue: {} as Record<string, unknown>, drop: async () => undefined }),
  redis: () => {
    const name = uniqueQueue("xtrace");
    return { queueName: name, queue: { backend: "redis", url: REDIS_URL, name }, drop: () => dropQueue(name) };
  },
};

describe("one trace from the API process to a `jfast worker` process", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  for (const [backend, setup] of Object.entries(BACKENDS)) {
    it(`on ${backend}: request → publish event → subscriber job → [jfast worker] process subscriber → mail job → process mail`, async () => {
      const { queueName, queue, drop } = setup();
      stops.push(drop);
      const schema = uniqueSchema("xtrace");
      stops.push(() => dropSchema(schema));
      await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".orders (id text PRIMARY KEY)`));
      const plugin: Settings = { database: { url: PG_URL, schema, pool_size: 2 }, queue };

      // The API process: this one, spans kept in memory.
      const fixture = await copyFixture("traced-shop");
      stops.push(fixture.remove);
      const exporter = new InMemorySpanExporter();
      const api: Jfast = await createJfast({ root: fixture.root, env: {}, logger: silentLogger, config: { plugin }, telemetry: { spanExporter: exporter } });
      stops.push(() => api.stop());
      await api.start();
      expect(api.require<QueueProvider>("queue").backend.kind).toBe(backend);
      const database = api.require<DatabaseProvider>("database");
      const outbox = api.require<Outbox>("outbox");
      const placed = await api.withRequest({ requestId: "req-8", traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () =>
        database.transaction(async (tx) => {
          await database.executorFor(tx).query(`INSERT INTO "${schema}".orders (id) VALUES ($1)`, ["o-2"]);
          const event = new Event({ type: "order.placed", data: { order_id: "o-2" }, key: "o-2" });
          await outbox.publish(tx, "orders", event);
          return event;
        }),
      );

      // The worker process: `jfast worker` in a service root whose telemetry endpoint is the collector.
      const collector = await startCollector("worker");
      stops.push(collector.close);
      const service = await serviceRoot({ ...plugin, telemetry: { endpoint: collector.url } });
      stops.push(service.remove);
      const env: NodeJS.ProcessEnv = { ...process.env, JFAST_DEBUG: "", OTEL_BSP_SCHEDULE_DELAY: "100" };
      for (const name of ["DATABASE_URL", "REDIS_URL", "AMQP_URL", "KAFKA_BROKERS", "PORT", "JFAST_ENV"]) delete env[name];
      const worker = spawn(process.execPath, [JFAST_BIN, "worker", "--root", service.root, "--concurrency", "2", "--grace", "5"], {
        cwd: service.root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      worker.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      worker.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => worker.once("exit", (code) => resolve(code)));
      stops.push(async () => {
        if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
        await exited;
      });
      await eventually(
        "the worker process to export the mail job's span",
        async () => {
          if (worker.exitCode !== null) throw new Error(`jfast worker exited with ${worker.exitCode}:\n${output}`);
          return collector.spans.some((s) => s.name === "process mail.send_receipt");
        },
        60_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\njfast worker output:\n${output}`);
      });
      worker.kill("SIGTERM");
      expect(await exited, output).toBe(0);
      expect(collector.rejected).toEqual([]);

      const local = flatten(exporter.getFinishedSpans(), "api");
      const remote = collector.spans;
      const all = [...local, ...remote];
      const tree = renderTree(all);
      console.log(`span tree (${backend}):\n${tree}`);

      expect(local.map((s) => s.name).sort()).toEqual([`publish ${queueName}`, "publish orders"]);
      expect(remote.map((s) => s.name).sort()).toEqual(["process mail.send_receipt", "process order.placed->order.notify", `publish ${queueName}`]);
      // One trace id, the request's, in both processes; both name the same service.
      expect(new Set(all.map((s) => s.traceId))).toEqual(new Set([TRACE_ID]));
      expect(new Set(all.map((s) => s.service))).toEqual(new Set(["shop"]));
      const one = (name: string, where: FlatSpan[]) => {
        const found = where.filter((s) => s.name === name);
        expect(found, name).toHaveLength(1);
        return found[0]!;
      };
      const publishEvent = one("publish orders", local);
      const publishSubscriberJob = one(`publish ${queueName}`, local);
      const processSubscriber = one("process order.placed->order.notify", remote);
      const publishMailJob = one(`publish ${queueName}`, remote);
      const processMail = one("process mail.send_receipt", remote);
      expect(publishEvent.parentSpanId).toBe(REQUEST_SPAN);
      expect(publishSubscriberJob.parentSpanId).toBe(publishEvent.spanId);
      // The hop between processes: the job (a jfast_jobs row, or an outbox row relayed to Redis) carried the
      // traceparent of its publish span.
      expect(processSubscriber.parentSpanId).toBe(publishSubscriberJob.spanId);
      expect(publishMailJob.parentSpanId).toBe(processSubscriber.spanId);
      expect(processMail.parentSpanId).toBe(publishMailJob.spanId);

      expect(publishEvent).toMatchObject({
        kind: "producer",
        attributes: { "messaging.system": "jfast", "messaging.operation.type": "send", "messaging.destination.name": "orders", "messaging.message.id": placed.id },
      });
      expect(publishSubscriberJob).toMatchObject({ kind: "producer", attributes: { "jfast.task": "order.placed->order.notify" } });
      expect(processSubscriber).toMatchObject({
        kind: "consumer",
        status: "unset",
        attributes: {
          "messaging.system": "jfast",
          "messaging.operation.type": "process",
          "messaging.destination.name": queueName,
          "messaging.message.id": publishSubscriberJob.attributes["messaging.message.id"],
          "jfast.attempt": 1,
        },
      });
      expect(publishMailJob).toMatchObject({ kind: "producer", attributes: { "jfast.task": "mail.send_receipt", "messaging.destination.name": queueName } });
      expect(processMail).toMatchObject({ kind: "consumer", attributes: { "messaging.message.id": publishMailJob.attributes["messaging.message.id"] } });
    }, 120_000);
  }
});
