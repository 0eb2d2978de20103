/**
 * Where the pickup of a job enqueued elsewhere spends its time, on PostgreSQL and on Redis: an idle jfast worker
 * and a second jfast instance that enqueues (as the bench's "enqueued elsewhere" column), with the drivers'
 * calls timed by wrapping them (node-postgres' Client.query and its notifications, ioredis' sendCommand).
 * Per pickup, from the enqueue call:
 *   enqueued   the producer's enqueue resolved (its commit or script)
 *   woken      PostgreSQL: the first NOTIFY delivered to a listener; Redis: the worker's BLMOVE answered
 *   claim sent the worker's claim statement or script sent
 *   claimed    its answer back
 *   started    the handler's first line
 * and the medians of each step.
 *
 *   npx tsx pickup-phases.ts                      (PHASES_BACKENDS=postgres,redis, PHASES_PICKUPS=200)
 *   PHASES_SPLIT=1 npx tsx pickup-phases.ts       the worker in a child process of its own, as run-subject.ts …/split:
 *                                                 its marks are taken in the child on the machine-wide monotonic clock
 *                                                 (PHASES_MARKS_FILE=<path>: the child also appends each pickup's marks
 *                                                 there, one JSON line each, to line up with a --cpu-prof of the child)
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createRequire } from "node:module";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Redis as RedisClient } from "ioredis";
import { createJfast, Job, task, type Jfast, type QueueProvider } from "@jfast/runtime";
import { dropRedisKeys } from "./lib/cleanup.js";
import { percentile } from "./lib/stats.js";
import { now, services, sleep } from "./lib/subject.js";

const BACKENDS = (process.env.PHASES_BACKENDS ?? "postgres,redis").split(",").filter(Boolean) as Array<"postgres" | "redis">;
const PICKUPS = Number(process.env.PHASES_PICKUPS ?? 200);
const SPLIT = process.env.PHASES_SPLIT === "1";
/** In the child of a split run: `--worker <backend> <root>`. */
const WORKER_ARGS = process.argv.includes("--worker") ? process.argv.slice(process.argv.indexOf("--worker") + 1) : null;

type Mark = "enqueued" | "woken" | "claimSent" | "claimed" | "started";
let marks: Partial<Record<Mark, number>> | null = null;
const mark = (name: Mark, at = now()) => {
  if (marks && marks[name] === undefined) marks[name] = at;
};
let onStarted: (() => void) | null = null;
const ping = task("bench.ping", async () => {
  mark("started");
  onStarted?.();
  // A split run's worker reports its marks to the producer.
  if (WORKER_ARGS && marks) {
    if (process.env.PHASES_MARKS_FILE) appendFileSync(process.env.PHASES_MARKS_FILE, `${JSON.stringify(marks)}\n`);
    process.send!({ type: "marks", marks });
    marks = null;
  }
});

// node-postgres: the claim is a prepared statement named jfast_claim; notifications come as events on the client.
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as { name?: string; text?: string } | string;
  const isClaim = typeof config === "object" && config !== null && typeof config.name === "string" && config.name.startsWith("jfast_claim");
  if (isClaim && marks?.woken !== undefined) mark("claimSent");
  const sent = now();
  const label = typeof config === "string" ? config : (config?.name ?? config?.text ?? "?");
  const traced = (trace && marks) ? trace : null;
  const finish = () => {
    if (isClaim && marks?.claimSent !== undefined) mark("claimed");
    traced?.push(`${String(label).replace(/\s+/g, " ").slice(0, 40)}: ${sent.toFixed(3)} → ${now().toFixed(3)}`);
  };
  const last = args[args.length - 1];
  if (typeof last === "function") {
    args[args.length - 1] = (...cb: unknown[]) => {
      finish();
      return (last as (...a: unknown[]) => unknown)(...cb);
    };
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) void result.then(finish, () => undefined);
  return result;
} as typeof pg.Client.prototype.query;
const emit = pg.Client.prototype.emit;
pg.Client.prototype.emit = function (this: pg.Client, event: string | symbol, ...args: unknown[]) {
  if (event === "notification") mark("woken");
  return emit.call(this, event, ...args);
};

// ioredis as the runtime loads it (its own copy), so that wrapping its prototype reaches the runtime's clients.
const { Redis } = createRequire(import.meta.resolve("@jfast/runtime"))("ioredis") as { Redis: typeof RedisClient };
/** Every command sent in a pickup's window (PHASES_TRACE=1 prints the first few). */
let trace: string[] | null = null;

// ioredis: the wait is BLMOVE; the claim is the claim script, sent once the wait answered.
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: RedisClient, command: Parameters<RedisClient["sendCommand"]>[0], ...rest: unknown[]) {
  const name = (command as { name?: string }).name;
  const promise = (command as { promise?: Promise<unknown> }).promise;
  if (trace && marks) {
    const sent = now();
    const args = ((command as { args?: unknown[] }).args ?? []).slice(0, 2).map((a) => String(a).slice(0, 24)).join(" ");
    void promise?.then(() => trace?.push(`${name} ${args}: ${sent.toFixed(3)} → ${now().toFixed(3)}`), () => undefined);
  }
  if (name === "blmove") void promise?.then((value) => value !== null && mark("woken"), () => undefined);
  if ((name === "evalsha" || name === "eval") && marks?.woken !== undefined && marks.claimSent === undefined) {
    mark("claimSent");
    void promise?.then(() => mark("claimed"), () => undefined);
  }
  return (sendCommand as (...a: unknown[]) => unknown).call(this, command, ...rest) as ReturnType<RedisClient["sendCommand"]>;
} as typeof Redis.prototype.sendCommand;

const silent = { debug() {}, info() {}, warn() {}, error: console.error };

async function measure(backend: "postgres" | "redis"): Promise<void> {
  const id = randomBytes(4).toString("hex");
  const schema = `jfast_phases_${id}`;
  const root = await mkdtemp(path.join(tmpdir(), "jfast-phases-"));
  const toml = [
    `[service]\nname = "phases"`,
    `[plugins]\nenabled = [${backend === "postgres" ? `"database", "queue"` : `"queue"`}]`,
    backend === "postgres" ? `[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"` : "",
    `[plugin.queue]\nbackend = "${backend}"\nname = "phases.${id}"\nkeep_completed = false${backend === "redis" ? `\nurl = "${services.redis}"` : ""}`,
  ].join("\n");
  await writeFile(path.join(root, "jfast.toml"), toml);
  const open = async () => {
    const jfast = await createJfast({ root, env: {}, tasks: [ping], logger: silent as never });
    await jfast.start();
    return jfast;
  };
  const local = SPLIT ? null : await openWorker(open);
  const child = SPLIT ? await startChild(backend, root) : null;
  const producer: Jfast = await open();
  const queue = producer.require<QueueProvider>("queue");
  const steps: Record<string, number[]> = {};
  const add = (step: string, value: number | undefined) => value !== undefined && (steps[step] ??= []).push(value);
  try {
    await sleep(300);
    for (let i = 0; i < PICKUPS; i++) {
      await sleep(20);
      let done: Promise<Partial<Record<Mark, number>>>;
      if (child) {
        child.send("arm");
        await new Promise((resolve) => child.once("message", resolve));
        done = new Promise((resolve) => child.once("message", (message) => resolve((message as { marks: Partial<Record<Mark, number>> }).marks)));
      } else {
        done = new Promise((resolve) => (onStarted = () => resolve(marks!)));
      }
      marks = {};
      if (process.env.PHASES_TRACE && i >= 50 && i < 53) trace = [];
      const t0 = now();
      await queue.enqueue(new Job({ task: "bench.ping" }));
      mark("enqueued");
      const enqueued = marks.enqueued;
      const m = { ...(await done), enqueued };
      await sleep(5);
      marks = null;
      if (trace) {
        console.log(`pickup ${i} from ${t0.toFixed(3)}: ${JSON.stringify(m)}\n  ${trace.join("\n  ")}`);
        trace = null;
      }
      add("total", m.started! - t0);
      add("enqueue call → enqueued", m.enqueued! - t0);
      add("enqueue call → woken", m.woken !== undefined ? m.woken - t0 : undefined);
      add("woken → claim sent", m.claimSent !== undefined && m.woken !== undefined ? m.claimSent - m.woken : undefined);
      add("claim sent → claimed", m.claimed !== undefined && m.claimSent !== undefined ? m.claimed - m.claimSent : undefined);
      add("claimed → started", m.claimed !== undefined ? m.started! - m.claimed : undefined);
    }
  } finally {
    await local?.stop();
    if (child) {
      child.send("stop");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    await producer.stop();
    if (backend === "postgres") {
      const admin = new pg.Client({ connectionString: services.postgres });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    } else {
      await dropRedisKeys(`*{phases.${id}}*`, services.redis);
    }
    await rm(root, { recursive: true, force: true });
  }
  const where = SPLIT ? "by another process" : "by a second instance";
  console.log(`\n${backend} (Node ${process.versions.node}), ${PICKUPS} pickups enqueued ${where}, ms:`);
  for (const [step, values] of Object.entries(steps)) {
    console.log(`  ${step.padEnd(26)} p50 ${percentile(values, 50).toFixed(3).padStart(7)}   p90 ${percentile(values, 90).toFixed(3).padStart(7)}   (${values.length} samples)`);
  }
}

/** An idle worker at concurrency 10 on `worker`'s own jfast instance. */
async function openWorker(open: () => Promise<Jfast>): Promise<{ stop(): Promise<void> }> {
  const worker = await open();
  const running = worker.createWorker({ concurrency: 10 });
  running.start();
  return {
    async stop() {
      await running.stop({ graceMs: 1000 });
      await worker.stop();
    },
  };
}

/** The worker of a split run: this script again, as `--worker`, answering "arm" once its marks are reset. */
async function startChild(backend: string, root: string) {
  const child = fork(fileURLToPath(import.meta.url), ["--worker", backend, root], { execArgv: process.execArgv });
  await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", (code) => reject(new Error(`the worker process exited (${code}) before it was ready`)));
  });
  return child;
}

if (WORKER_ARGS) {
  const [, root] = WORKER_ARGS;
  const worker = await openWorker(async () => {
    const jfast = await createJfast({ root: root!, env: {}, tasks: [ping], logger: silent as never });
    await jfast.start();
    return jfast;
  });
  process.on("message", (message) => {
    if (message === "arm") {
      marks = {};
      process.send!("armed");
    } else if (message === "stop") {
      void worker.stop().then(() => process.exit(0));
    }
  });
  process.send!("ready");
} else {
  for (const backend of BACKENDS) await measure(backend);
  process.exit(0);
}
