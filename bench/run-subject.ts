/**
 * One run of one subject: prints a JSON line of its measurements on stdout.
 *
 *   npx tsx run-subject.ts <subject>          one process enqueues and works the queue
 *   npx tsx run-subject.ts <subject>/split    this process enqueues, a child process of its own works the queue
 *
 * run-bench.ts starts jfast's subjects on Node 24 as an embedded service is told to (docs/deploy.md): the same by hand is
 * `node --import @jfast/cli/dist/register-fast-imports.js --import tsx run-subject.ts jfast-postgres`.
 *
 * (BENCH_JOBS, BENCH_PICKUPS, BENCH_DEAD.) In the separate-process run, as a service and its worker run in
 * production, the two processes share nothing but the engine: the child is told over IPC when to drain, when to
 * start its idle worker and when a pickup is coming, and reports each drain's duration and each handler's start
 * on the machine-wide monotonic clock (`now()` in lib/subject.ts), which both processes read alike.
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { SPLIT, SUBJECTS } from "./subjects/index.js";
import { percentile } from "./lib/stats.js";
import { now, probe, sleep, timePickup, type Subject, type SubjectContext } from "./lib/subject.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
const PICKUPS = Number(process.env.BENCH_PICKUPS ?? 200);
const DEAD = Number(process.env.BENCH_DEAD ?? 100_000);
/** How long a pickup may take before the run fails (a job that never reaches the other process). */
const PICKUP_TIMEOUT_MS = 30_000;

type Latency = { p50: number; p99: number };
const summary = (samples: number[]): Latency => ({ p50: percentile(samples, 50), p99: percentile(samples, 99) });
const rssMb = () => process.resourceUsage().maxRSS / 1024;

function subjectFor(name: string, context: SubjectContext): Subject {
  const factory = SUBJECTS[name];
  if (!factory) throw new Error(`no bench subject named "${name}"; known: ${Object.keys(SUBJECTS).join(", ")}`);
  return factory(context);
}

async function pickups(start: () => Promise<void>, stop: () => Promise<void>, one: () => Promise<number>): Promise<Latency> {
  await start();
  await sleep(200);
  const samples: number[] = [];
  for (let i = 0; i < PICKUPS; i++) {
    // Idle long enough that the worker is waiting for work, not between two claims.
    await sleep(20);
    samples.push(await one());
  }
  await stop();
  return summary(samples);
}

async function singleProcessRun(name: string, result: Record<string, unknown>): Promise<void> {
  const subject = subjectFor(name, { namespace: randomBytes(4).toString("hex"), role: "both" });
  await subject.setup();
  result.label = `${subject.label} (Node ${process.versions.node.split(".")[0]})`;
  result.settings = subject.settings;
  try {
    let t0 = performance.now();
    await subject.enqueue(JOBS);
    result.enqueue = JOBS / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    await subject.drain(JOBS, 1);
    result.c1 = JOBS / ((performance.now() - t0) / 1000);
    await subject.enqueue(JOBS);
    t0 = performance.now();
    await subject.drain(JOBS, 10);
    result.c10 = JOBS / ((performance.now() - t0) / 1000);
    const idle = [() => subject.startIdle(), () => subject.stopIdle()] as const;
    result.pickup = await pickups(...idle, () => timePickup(() => subject.enqueueOne()));
    const elsewhere = subject.enqueueOneElsewhere ? () => timePickup(() => subject.enqueueOneElsewhere!()) : undefined;
    if (elsewhere) result.pickupElsewhere = await pickups(...idle, elsewhere);
    if (subject.fillDead && DEAD > 0) {
      await subject.fillDead(DEAD);
      // Enqueued elsewhere where that differs: the worker claims the job through the table the dead rows are in.
      result.pickupDead = await pickups(...idle, elsewhere ?? (() => timePickup(() => subject.enqueueOne())));
    }
  } finally {
    await subject.teardown();
  }
  result.rssMb = rssMb();
}

// ---- the separate-process run ----------------------------------------------------------------------------------

type Command =
  | { cmd: "drain"; count: number; concurrency: number }
  | { cmd: "startIdle" }
  | { cmd: "arm" }
  | { cmd: "stopIdle" }
  | { cmd: "teardown" };
type FromWorker =
  | { type: "ready" }
  | { type: "reply"; id: number; seconds?: number; rssMb?: number }
  | { type: "failed"; id: number | null; error: string }
  | { type: "started"; at: number };

/** The producer's handle on its worker process. */
class WorkerProcess {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (m: FromWorker & { type: "reply" }) => void; reject: (e: Error) => void }>();
  private onStarted: ((at: number) => void) | null = null;
  private failure: Error | null = null;
  private constructor(private readonly child: ChildProcess) {}

  static async start(name: string, namespace: string): Promise<WorkerProcess> {
    const child = fork(fileURLToPath(import.meta.url), [name, "--worker", namespace], {
      execArgv: process.execArgv,
      // The parent's stdout carries the result line only: the worker's output goes to stderr.
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    });
    child.stdout!.pipe(process.stderr);
    const worker = new WorkerProcess(child);
    const ready = new Promise<void>((resolve, reject) => {
      child.on("message", (raw) => {
        const message = raw as FromWorker;
        if (message.type === "ready") return resolve();
        worker.receive(message);
      });
      child.once("exit", (code, signal) => {
        const error = new Error(`the worker process of ${name} exited (${signal ?? code}) before the run ended`);
        worker.fail(error);
        reject(error);
      });
    });
    await ready;
    return worker;
  }

  private receive(message: FromWorker): void {
    if (message.type === "started") {
      const started = this.onStarted;
      this.onStarted = null;
      started?.(message.at);
      return;
    }
    if (message.type === "failed") {
      const error = new Error(`the worker process failed: ${message.error}`);
      if (message.id === null) return this.fail(error);
      this.pending.get(message.id)?.reject(error);
      this.pending.delete(message.id);
      return;
    }
    if (message.type === "reply") {
      this.pending.get(message.id)?.resolve(message);
      this.pending.delete(message.id);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  send(command: Command): Promise<FromWorker & { type: "reply" }> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, ...command });
    });
  }

  /** Times one job from the call to `enqueue` until the worker process reports its handler's start. */
  async timePickup(enqueue: () => Promise<unknown>): Promise<number> {
    const started = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no handler started in the worker process within ${PICKUP_TIMEOUT_MS} ms`)), PICKUP_TIMEOUT_MS);
      this.onStarted = (at) => {
        clearTimeout(timer);
        resolve(at);
      };
    });
    await this.send({ cmd: "arm" });
    const t0 = now();
    await enqueue();
    return (await started) - t0;
  }
}

async function splitRun(name: string, result: Record<string, unknown>): Promise<void> {
  const base = name.slice(0, -"/split".length);
  if (!SPLIT.has(base)) throw new Error(`${base} has no separate-process run; those that do: ${[...SPLIT].join(", ")}`);
  const namespace = randomBytes(4).toString("hex");
  const producer = subjectFor(base, { namespace, role: "producer" });
  // The producer first: it creates what the two share (a schema and its migrations, a queue), then the worker.
  await producer.setup();
  result.label = `${producer.label} (Node ${process.versions.node.split(".")[0]}, separate processes)`;
  result.settings = producer.settings;
  let worker: WorkerProcess | null = null;
  try {
    worker = await WorkerProcess.start(base, namespace);
    const w = worker;
    let t0 = performance.now();
    await producer.enqueue(JOBS);
    result.enqueue = JOBS / ((performance.now() - t0) / 1000);
    result.c1 = JOBS / (await w.send({ cmd: "drain", count: JOBS, concurrency: 1 })).seconds!;
    await producer.enqueue(JOBS);
    result.c10 = JOBS / (await w.send({ cmd: "drain", count: JOBS, concurrency: 10 })).seconds!;
    result.pickup = await pickups(
      async () => void (await w.send({ cmd: "startIdle" })),
      async () => void (await w.send({ cmd: "stopIdle" })),
      () => w.timePickup(() => producer.enqueueOne()),
    );
    // Peak RSS: the two processes' peaks added, to compare with the single process that does both.
    const producerMb = rssMb();
    const workerMb = (await w.send({ cmd: "teardown" })).rssMb!;
    Object.assign(result, { rssProducerMb: producerMb, rssWorkerMb: workerMb, rssMb: producerMb + workerMb });
  } finally {
    await producer.teardown();
  }
}

/** The child of a separate-process run: works the queue when told to. */
async function workerProcess(name: string, namespace: string): Promise<void> {
  const subject = subjectFor(name, { namespace, role: "worker" });
  const send = (message: FromWorker): void => {
    process.send!(message);
  };
  try {
    await subject.setup();
  } catch (error) {
    send({ type: "failed", id: null, error: String((error as Error).stack ?? error) });
    process.exit(1);
  }
  let queue = Promise.resolve();
  process.on("message", (raw) => {
    const { id, ...command } = raw as Command & { id: number };
    // One command at a time, in the order they came.
    queue = queue.then(async () => {
      try {
        switch (command.cmd) {
          case "drain": {
            const t0 = performance.now();
            await subject.drain(command.count, command.concurrency);
            return send({ type: "reply", id, seconds: (performance.now() - t0) / 1000 });
          }
          case "startIdle":
            await subject.startIdle();
            return send({ type: "reply", id });
          case "arm":
            probe.started = (at) => send({ type: "started", at });
            return send({ type: "reply", id });
          case "stopIdle":
            await subject.stopIdle();
            return send({ type: "reply", id });
          case "teardown":
            await subject.teardown();
            send({ type: "reply", id, rssMb: rssMb() });
            return void setImmediate(() => process.exit(0));
        }
      } catch (error) {
        send({ type: "failed", id, error: String((error as Error).stack ?? error) });
      }
    });
  });
  send({ type: "ready" });
}

async function main(): Promise<void> {
  const name = process.argv[2]!;
  if (process.argv[3] === "--worker") {
    await workerProcess(name, process.argv[4]!);
    return;
  }
  // "<subject>@node20": the same subject, run by run-bench.ts on Node 20 (a row of its own).
  const base = name.replace(/@node\d+$/, "");
  const result: Record<string, unknown> = { subject: name };
  if (base.endsWith("/split")) await splitRun(base, result);
  else await singleProcessRun(base, result);
  process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
  process.exit(0);
}

await main();
