/** jfast's flows (queue.flow) on PostgreSQL or Redis, with completed jobs deleted as the plain subject runs. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { createJfast, Job, task, type FlowStepInput, type Jfast, type QueueProvider } from "@jfast/runtime";
import { dropRedisKeys } from "../lib/cleanup.js";
import { probe, services } from "../lib/subject.js";
import { inParallel, joinStarted, type FlowSubject } from "./subject.js";

const noop = task("bench.noop", async () => probe.hit());
// A join reads its parents' results (tools.flow.results, read before the attempt starts) and then runs.
const join = task("bench.join", async () => {
  joinStarted();
  probe.hit();
});
const silent = { debug() {}, info() {}, warn() {}, error: console.error };
/** queue.flow writes one flow per call: this many calls at once. */
const PARALLEL_FLOWS = 50;

export function jfastFlowSubject(backend: "postgres" | "redis", namespace: string): FlowSubject {
  const schema = `jfast_bench_${namespace}`;
  const queueName = `bench.${namespace}`;
  let root = "";
  let jfast: Jfast;
  let queue: QueueProvider;
  const toml = [
    `[service]\nname = "bench"`,
    `[plugins]\nenabled = [${backend === "postgres" ? `"database", "queue"` : `"queue"`}]`,
    backend === "postgres" ? `[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\npool_size = 12` : "",
    `[plugin.queue]\nbackend = "${backend}"\nname = "${queueName}"\nconcurrency = 10\nkeep_completed = false${backend === "redis" ? `\nurl = "${services.redis}"` : ""}`,
  ].join("\n");
  const steps = (names: string[], after: (name: string, i: number) => string[]): Record<string, FlowStepInput> =>
    Object.fromEntries(names.map((name, i) => [name, { job: new Job({ task: name === "join" ? "bench.join" : "bench.noop" }), after: after(name, i) }]));
  return {
    label: `jfast ${backend}`,
    settings: `queue.flow, ${PARALLEL_FLOWS} calls at once; plain jobs by queue.enqueue in chunks of 5 000; keep_completed = false${backend === "postgres" ? ", pool_size 12" : ""}`,
    async setup() {
      root = await mkdtemp(path.join(tmpdir(), "jfast-bench-flows-"));
      await writeFile(path.join(root, "jfast.toml"), toml);
      jfast = await createJfast({ root, env: {}, tasks: [noop, join], logger: silent as never });
      await jfast.start();
      queue = jfast.require<QueueProvider>("queue");
    },
    async enqueuePlain(count) {
      for (let i = 0; i < count; i += 5000) await queue.enqueue(Array.from({ length: Math.min(5000, count - i) }, () => new Job({ task: "bench.noop" })));
    },
    async enqueueChains(count, length) {
      const names = Array.from({ length }, (_, i) => `s${i}`);
      await inParallel(count, PARALLEL_FLOWS, () => queue.flow({ steps: steps(names, (_, i) => (i === 0 ? [] : [names[i - 1]!])) }));
    },
    async enqueueFanIns(count, width) {
      const parallel = Array.from({ length: width }, (_, i) => `p${i}`);
      const names = [...parallel, "join"];
      await inParallel(count, count === 1 ? 1 : PARALLEL_FLOWS, () => queue.flow({ steps: steps(names, (name) => (name === "join" ? parallel : [])) }));
    },
    async startWorker(concurrency) {
      const worker = jfast.createWorker({ concurrency });
      worker.start();
      return () => worker.stop({ graceMs: 1000 });
    },
    async teardown() {
      await jfast?.stop();
      if (backend === "postgres") {
        const admin = new pg.Client({ connectionString: services.postgres });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      }
      if (backend === "redis") await dropRedisKeys(`*{${queueName}}*`);
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}
