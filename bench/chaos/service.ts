/**
 * A throwaway service root for one chaos run: jfast.toml for the backend under test, one module whose task
 * records "started" on its own and its effect ("finished") in PostgreSQL inside its TaskSession, guarded by the
 * inbox (idempotentOn → claimOnce), and a recurring task for the clock scenario.
 * node_modules is linked in so the module and the CLI resolve the same @jfast/runtime.
 */
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** rabbitmq-cluster: quorum queues on the loopback three-node cluster (docker/rabbitmq-cluster). */
export type ChaosBackend = "postgres" | "redis" | "rabbitmq" | "rabbitmq-cluster";

export const MAX_PAYLOAD_BYTES = 64 * 1024;
/** The workers' lease (visibility_timeout) and poll interval, in seconds: how soon an unsettled job comes back. */
export const VISIBILITY_TIMEOUT_S = 3;
export const POLL_INTERVAL_S = 1;

/**
 * The effects table, in the run's effects database: a "started" row written (and committed on its own) when a
 * handler's body begins, a "finished" row written in the job's task session with the inbox key, so it commits
 * exactly when the job's work does. `run` ties the two rows of one handler run together. The partial indexes keep
 * "what is running in this process" (harness.ts inFlight) an index lookup per row however the table grows: without
 * them, and before autovacuum had analyzed the growing table, PostgreSQL planned it as a nested-loop anti-join over
 * the whole table, 56 s a query at 100 000 rows, and the third full run's kills could not find a running handler
 * before the batch drained.
 */
export const effectsTableSql = (schema: string) =>
  `CREATE TABLE ${schema}.chaos_effects (n integer NOT NULL, pid integer NOT NULL, run uuid NOT NULL, phase text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp(), attempt integer);
   CREATE INDEX ON ${schema}.chaos_effects (n);
   CREATE INDEX ON ${schema}.chaos_effects (run) WHERE phase = 'finished';
   CREATE INDEX ON ${schema}.chaos_effects (pid) WHERE phase = 'started';
   CREATE TABLE ${schema}.chaos_ticks (scheduled_for timestamptz NOT NULL, pid integer NOT NULL, attempt integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`;

/** The recurring task of the clock scenario: every TICK_EVERY_S seconds, by the epoch in UTC. */
export const TICK_EVERY_S = 2;

export async function createServiceRoot(params: { backend: ChaosBackend; schema: string; queue: string; postgresUrl: string; queueUrl: string | null; effectsUrl: string }): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), `jfast-chaos-${params.backend}-`));
  const url = params.queueUrl;
  const kind = params.backend === "rabbitmq-cluster" ? `rabbitmq"\nqueue_type = "quorum` : params.backend;
  await writeFile(
    path.join(root, "jfast.toml"),
    [
      `[service]\nname = "chaos"`,
      `[plugins]\nenabled = ["observability", "database", "queue"]`,
      `[plugin.observability]\nlog_level = "info"`,
      `[plugin.database]\nurl = "${params.postgresUrl}"\nschema = "${params.schema}"\npool_size = 6`,
      // A short visibility timeout so a killed worker's jobs come back within seconds; attempts enough for
      // several kills of the same job (each kill -9 mid-attempt spends one).
      `[plugin.queue]\nbackend = "${kind}"\nname = "${params.queue}"\nconcurrency = 8\nmax_attempts = 25\n` +
        `visibility_timeout = ${VISIBILITY_TIMEOUT_S}\npoll_interval = ${POLL_INTERVAL_S}\nbackoff_base = 0.2\nmax_payload_bytes = ${MAX_PAYLOAD_BYTES}\nscheduler = true` +
        (url ? `\nurl = "${url}"` : ""),
      // The clock scenario's ticks in a queue of their own: the stuck count reads the default queue only.
      `[queues.ticks]\nconcurrency = 2`,
    ].join("\n"),
  );
  await writeFile(path.join(root, "package.json"), JSON.stringify({ name: "chaos-service", private: true, type: "module" }));
  await mkdir(path.join(root, "modules", "chaos"), { recursive: true });
  await writeFile(
    path.join(root, "modules", "chaos", "tasks.ts"),
    `import { createHash, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import pg from "pg";
import { task } from "@jfast/runtime";

// "started" goes straight to the effects database (never through the network faults' proxy) and commits at
// once: it survives a kill of this process, which is how the harness knows a handler was running in it.
const direct = new pg.Pool({ connectionString: ${JSON.stringify(params.effectsUrl)}, max: 8 });
direct.on("error", () => undefined);

// The effect is the "finished" row, in the task session with the inbox key: a redelivery of committed work
// skips the body; a run killed before its commit leaves a "started" row only and runs again.
export const effect = task(
  "chaos.effect",
  { session: true, idempotentOn: (p: { n: number; ms?: number; blockMs?: number }) => p.n },
  async (payload: { n: number; ms?: number; blockMs?: number }, { session }: { session: any }) => {
    const run = randomUUID();
    await direct.query("INSERT INTO ${params.schema}.chaos_effects (n, pid, run, phase) VALUES ($1, $2, $3, 'started')", [payload.n, process.pid, run]);
    // The blocked-loop scenario: synchronous CPU work (as rendering a PDF would be) that keeps this process's
    // event loop, its timers and its worker's heartbeat silent for payload.blockMs.
    if (payload.blockMs !== undefined) {
      const until = performance.now() + payload.blockMs;
      let digest = "";
      while (performance.now() < until) digest = createHash("sha256").update(digest + payload.n).digest("hex");
    }
    // The kill scenarios ask for longer handlers (payload.ms): a batch that lasts, and wide windows mid-job.
    await new Promise((r) => setTimeout(r, payload.ms !== undefined ? payload.ms * (0.5 + Math.random()) : 5 + Math.random() * 35));
    await session.execute(sql\`INSERT INTO ${params.schema}.chaos_effects (n, pid, run, phase) VALUES (\${payload.n}, \${process.pid}, \${run}, 'finished')\`);
  },
);

// A step of the flows scenario: the same two rows as chaos.effect, the "started" one with the attempt it belongs
// to, and its n as its result. A join checks that every step it runs after passed its n on (a step whose body the
// inbox skipped after a kill completes without a result, which reads as undefined); a wrong one is a "bad-results" row.
export const step = task(
  "chaos.step",
  { session: true, idempotentOn: (p: { n: number }) => p.n },
  async (payload: { n: number; ms: number; parents?: Record<string, number> }, tools: any) => {
    const run = randomUUID();
    await direct.query("INSERT INTO ${params.schema}.chaos_effects (n, pid, run, phase, attempt) VALUES ($1, $2, $3, 'started', $4)", [payload.n, process.pid, run, tools.job.attempts]);
    const results = tools.flow?.results ?? {};
    const wrong = Object.entries(payload.parents ?? {}).filter(([name, n]) => !(name in results) || (results[name] !== undefined && results[name]?.n !== n));
    if (wrong.length > 0) await direct.query("INSERT INTO ${params.schema}.chaos_effects (n, pid, run, phase) VALUES ($1, $2, $3, 'bad-results')", [payload.n, process.pid, run]);
    await new Promise((r) => setTimeout(r, payload.ms * (0.5 + Math.random())));
    await tools.session.execute(sql\`INSERT INTO ${params.schema}.chaos_effects (n, pid, run, phase) VALUES (\${payload.n}, \${process.pid}, \${run}, 'finished')\`);
    return { n: payload.n };
  },
);

// The clock scenario's schedule: each run records its tick, its attempt and the effects database's time. A tick's
// job run again after a worker was killed mid-run is a retry (a later attempt); the same tick enqueued twice would
// start again at attempt 1.
export const tick = task("chaos.tick", { every: { seconds: ${TICK_EVERY_S} }, queue: "ticks" }, async (payload: { scheduled_for: string }, { job }: { job: { attempts: number } }) => {
  await direct.query("INSERT INTO ${params.schema}.chaos_ticks (scheduled_for, pid, attempt) VALUES ($1, $2, $3)", [payload.scheduled_for, process.pid, job.attempts]);
});
`,
  );
  await symlink(path.resolve(new URL("../../node_modules", import.meta.url).pathname), path.join(root, "node_modules"));
  return root;
}
