// One trace across two processes: this test's process is the API (in one transaction it writes a row,
// publishes order.placed and enqueues payment.capture through the outbox), and a real `jfast worker` process
// — the CLI binary, run on a copy of the traced-shop service — runs the subscriber job, the mail job the
// subscriber enqueues, and both failing attempts of payment.capture. The worker exports its spans with
// OTLP/HTTP (`[plugin.telemetry] endpoint`) to a collector this test runs; its log lines are read from stderr.
import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { parse, stringify } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { copyFixture, dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { AMQP_URL, dropQueue as dropRabbitQueue, uniqueQueue as uniqueRabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
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
  rabbitmq: () => {
    const name = uniqueRabbitQueue("xtrace");
    return { queueName: name, queue: { backend: "rabbitmq", url: AMQP_URL, name }, drop: () => dropRabbitQueue(name) };
  },
};

describe("one trace from the API process to a `jfast worker` process", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  for (const [backend, setup] of Object.entries(BACKENDS)) {
    it(`on ${backend}: request → publish event → subscriber job → [jfast worker] process subscriber → mail job → process mail; a failing job's attempts and logs`, async () => {
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
      const { placed, capture } = await api.withRequest({ requestId: "req-8", tenantId: "acme", traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () =>
        database.transaction(async (tx) => {
          await database.executorFor(tx).query(`INSERT INTO "${schema}".orders (id) VALUES ($1)`, ["o-2"]);
          const event = new Event({ type: "order.placed", data: { order_id: "o-2" }, key: "o-2" });
          await outbox.publish(tx, "orders", event);
          const job = new Job({ task: "payment.capture", payload: { order_id: "o-2" } });
          await outbox.enqueue(tx, job);
          return { placed: event, capture: job };
        }),
      );

      // The worker process: `jfast worker` in a service root whose telemetry endpoint is the collector.
      const collector = await startCollector("worker");
      stops.push(collector.close);
      const service = await serviceRoot({ ...plugin, telemetry: { endpoint: collector.url } });
      stops.push(service.remove);
      const env: NodeJS.ProcessEnv = { ...process.env, JFAST_DEBUG: "", OTEL_BSP_SCHEDULE_DELAY: "100" };
      for (const name of ["DATABASE_URL", "REDIS_URL", "AMQP_URL", "KAFKA_BROKERS", "PORT", "JFAST_ENV", "JFAST_QUEUE_NAME", "JFAST_DISABLE_PLUGINS", "KAFKA_TOPIC_PREFIX"]) delete env[name];
      const worker = spawn(process.execPath, [JFAST_BIN, "worker", "--root", service.root, "--concurrency", "2", "--grace", "5"], {
        cwd: service.root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      let stderr = "";
      worker.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      worker.stderr!.on("data", (chunk: Buffer) => ((output += chunk.toString()), (stderr += chunk.toString())));
      const exited = new Promise<number | null>((resolve) => worker.once("exit", (code) => resolve(code)));
      stops.push(async () => {
        if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
        await exited;
      });
      await eventually(
        "the worker process to export the mail job's span and both payment.capture attempts",
        async () => {
          if (worker.exitCode !== null) throw new Error(`jfast worker exited with ${worker.exitCode}:\n${output}`);
          return (
            collector.spans.some((s) => s.name === "process mail.send_receipt") &&
            collector.spans.filter((s) => s.name === "process payment.capture").length === 2 &&
            stderr.includes("dead-lettered")
          );
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

      expect(local.map((s) => s.name).sort()).toEqual([`publish ${queueName}`, `publish ${queueName}`, "publish orders"]);
      expect(remote.map((s) => s.name).sort()).toEqual([
        "process mail.send_receipt",
        "process order.placed->order.notify",
        "process payment.capture",
        "process payment.capture",
        `publish ${queueName}`,
      ]);
      // One trace id, the request's, in both processes; both name the same service.
      expect(new Set(all.map((s) => s.traceId))).toEqual(new Set([TRACE_ID]));
      expect(new Set(all.map((s) => s.service))).toEqual(new Set(["shop"]));
      const one = (name: string, where: FlatSpan[], task?: string) => {
        const found = where.filter((s) => s.name === name && (task === undefined || s.attributes["jfast.task"] === task));
        expect(found, `${name} ${task ?? ""}`).toHaveLength(1);
        return found[0]!;
      };
      const publishEvent = one("publish orders", local);
      const publishSubscriberJob = one(`publish ${queueName}`, local, "order.placed->order.notify");
      const publishCapture = one(`publish ${queueName}`, local, "payment.capture");
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

      // The failing job: enqueued in the request (its publish span a child of the request's span), each attempt
      // in the worker a child of that publish span, ended as an error with the exception's class.
      expect(publishCapture.parentSpanId).toBe(REQUEST_SPAN);
      const attempts = remote.filter((s) => s.name === "process payment.capture").sort((a, b) => Number(a.attributes["jfast.attempt"]) - Number(b.attributes["jfast.attempt"]));
      expect(attempts.map((s) => [s.parentSpanId, s.attributes["jfast.attempt"], s.status, s.attributes["error.type"], s.attributes["messaging.message.id"]])).toEqual([
        [publishCapture.spanId, 1, "error", "CardDeclined", capture.id],
        [publishCapture.spanId, 2, "error", "CardDeclined", capture.id],
      ]);

      // Its log lines, written by the worker process, carry the request that enqueued it.
      const records = stderr
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, any>);
      const failures = records.filter((r) => r.task === "payment.capture" && r.error);
      expect(failures.map((r) => [r.level, r.msg, r.attempt])).toEqual([
        ["warn", "job failed; will retry", 1],
        ["error", "job failed for the last time; dead-lettered", 2],
      ]);
      for (const failure of [...failures, ...records.filter((r) => r.msg === "capturing the payment")]) {
        expect(failure).toMatchObject({ service: "shop", request_id: "req-8", tenant_id: "acme", job_id: capture.id, task: "payment.capture" });
      }
      expect(failures[0]!.error).toMatchObject({ class: "CardDeclined", message: "the card for order o-2 was declined" });
      expect(records.filter((r) => r.msg === "capturing the payment").map((r) => r.attempt)).toEqual([1, 2]);
    }, 120_000);
  }
});
