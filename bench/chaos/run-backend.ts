/**
 * One backend's chaos run: its engine started privately, a parent service instance and two workers (each
 * through a proxy of its own), then every scenario CHAOS_RUNS times, then malformed input and a too-large payload.
 */
import { rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createJfast, Job, type Jfast, type QueueProvider } from "@jfast/runtime";
import { dropJfastAmqpQueue } from "../lib/cleanup.js";
import { services, sleep } from "../lib/subject.js";
import { Harness, type ScenarioResult } from "./harness.js";
import { flowKills } from "./flows-scenario.js";
import { injectMalformed } from "./inject.js";
import { startPrivatePostgres, type PrivatePostgres } from "./private-postgres.js";
import { startPrivateRabbitMq, type PrivateRabbitMq } from "./private-rabbitmq.js";
import { startPrivateRedis, type PrivateRedis } from "./private-redis.js";
import { FaultProxy } from "./proxy.js";
import { killRabbitMqNode, rabbitmqClusterFirstUrl, rabbitmqClusterUrl } from "./rabbitmq-cluster.js";
import { blockedLoop, brokerKill, clockAhead, network, workerKills, type BrokerKill, type NetworkFault } from "./scenarios.js";
import { createServiceRoot, effectsTableSql, MAX_PAYLOAD_BYTES, type ChaosBackend } from "./service.js";
import { WorkerProcess } from "./workers.js";

export interface BackendRun {
  backend: ChaosBackend | "kafka";
  scenarios: ScenarioResult[];
  /** Once per backend, after the scenarios: malformed input and the payload limit. */
  extras: Array<{ fault: string; detail: string }>;
  problems: string[];
}

/** How long after a kill -9 the other workers have swept the killed one (its Redis registration lives 30 s). */
const KILLED_WORKER_SWEPT_MS = 35_000;
const DEFAULT_PORT: Record<ChaosBackend, number> = { postgres: 5432, redis: 6379, rabbitmq: 5672, "rabbitmq-cluster": 5672 };
const ENV_VAR: Record<ChaosBackend, string> = { postgres: "DATABASE_URL", redis: "REDIS_URL", rabbitmq: "AMQP_URL", "rabbitmq-cluster": "AMQP_URL" };

export async function runBackend(params: { backend: ChaosBackend; jobs: number; kills: number; blocked: number; runs: number; network: NetworkFault[]; scenarios: string[] }): Promise<BackendRun> {
  const { backend, jobs, kills, runs } = params;
  const id = randomBytes(4).toString("hex");
  const schema = `jfast_chaos_${id}`;
  const queueName = `chaos.${id}`;
  const problems: string[] = [];
  const scenarios: ScenarioResult[] = [];
  const extras: BackendRun["extras"] = [];
  // Every engine the run kills is its own: the shared servers other suites use are never touched.
  let privatePg: PrivatePostgres | null = null;
  let privateRedis: PrivateRedis | null = null;
  let privateRabbit: PrivateRabbitMq | null = null;
  let jfast: Jfast | null = null;
  let db: pg.Pool | null = null;
  let root: string | null = null;
  const workers: WorkerProcess[] = [];
  const proxies: FaultProxy[] = [];
  try {
    if (backend === "postgres") privatePg = await startPrivatePostgres();
    if (backend === "redis") privateRedis = await startPrivateRedis();
    if (backend === "rabbitmq") privateRabbit = await startPrivateRabbitMq();
    const postgresUrl = privatePg?.url ?? services.postgres;
    const engineUrl = privatePg?.url ?? privateRedis?.url ?? privateRabbit?.url ?? rabbitmqClusterUrl();
    root = await createServiceRoot({ backend, schema, queue: queueName, postgresUrl, queueUrl: backend === "postgres" ? null : engineUrl, effectsUrl: postgresUrl });
    // A pool, not one client: a connection does not survive the server's restart, the pool replaces it.
    db = new pg.Pool({ connectionString: postgresUrl, max: 3 });
    db.on("error", () => undefined);
    jfast = await createJfast({ root, env: {} });
    await jfast.start();
    await db.query(effectsTableSql(schema));
    const queue = jfast.require<QueueProvider>("queue");
    for (const name of ["worker A", "worker B"]) {
      const w = new WorkerProcess(root, name);
      // Each worker reaches the engine through a proxy of its own (the network scenarios misbehave on A's);
      // the cluster's URL list is left as it is.
      if (backend !== "rabbitmq-cluster") {
        const proxy = new FaultProxy(FaultProxy.targetOf(engineUrl, DEFAULT_PORT[backend]));
        w.env[ENV_VAR[backend]] = FaultProxy.rewrite(engineUrl, await proxy.listen());
        proxies.push(proxy);
      }
      workers.push(w);
    }
    for (const w of workers) w.start();
    for (const w of workers) await w.waitRunning();
    const h = new Harness(backend, queue, db, schema, workers, proxies);

    const engineKills: BrokerKill[] =
      backend === "postgres"
        ? [{ scenario: "PostgreSQL killed (stop -m immediate)", detail: "server stopped in immediate mode (crash recovery at start) and started", kill: () => privatePg!.restart(500) }]
        : backend === "redis"
          ? (["always", "everysec"] as const).map((mode) => ({
              scenario: `redis-server kill -9, appendfsync ${mode}`,
              detail: `kill -9 of redis-server (appendonly yes, appendfsync ${mode}), started again on its AOF`,
              prepare: () => privateRedis!.setAppendfsync(mode),
              kill: () => privateRedis!.kill9(500),
              lossAllowed: mode === "everysec",
            }))
          : backend === "rabbitmq"
            ? [{ scenario: "RabbitMQ node kill -9", detail: "kill -9 of the node's VM (beam.smp), started again on its data", kill: () => privateRabbit!.kill9(500) }]
            : [{ scenario: "cluster node kill -9", detail: "kill -9 of the node every process is connected to (and the queues' leader), started again", kill: () => killRabbitMqNode(500) }];

    const step = async (what: string, run: () => Promise<ScenarioResult>) => {
      const t = Date.now();
      const r = await run();
      scenarios.push(r);
      console.log(`chaos: ${backend} / ${what}: lost ${r.lost}, duplicated ${r.duplicated}, runs twice ${r.runsTwice}, stuck ${r.stuck}, ${((Date.now() - t) / 1000).toFixed(1)} s${r.problems.length ? ` — ${r.problems.join("; ")}` : ""}`);
    };
    const only = (name: string) => params.scenarios.includes(name);
    for (let run = 0; run < runs; run++) {
      if (only("kill")) await step("kill -9 worker", () => workerKills(h, jobs, kills));
      if (only("flows") && queue.backend.capabilities.flows) await step("kill -9 worker mid-flow", () => flowKills(h, jobs, kills));
      if (only("engine")) for (const k of engineKills) await step(k.scenario, () => brokerKill(h, jobs, k));
      if (only("clock")) await step("clock", () => clockAhead(h, jobs));
      if (only("network") && proxies.length > 0) for (const f of params.network) await step(`network ${f}`, () => network(h, jobs, f));
      if (only("blocked")) {
        // A worker killed with -9 is swept by the others once its registration expires (on Redis 30 s later, with
        // a warning): that warning must not land in the blocked-loop scenario's check of what the workers logged.
        const lastKill = Math.max(...workers.map((w) => w.killedAt));
        if (lastKill > 0) {
          await sleep(Math.max(0, lastKill + KILLED_WORKER_SWEPT_MS - Date.now()));
          // On a loaded machine the workers' own timers may not have swept yet: this process sweeps what is left, so
          // no worker sweeps (and warns about) a killed one during the scenario.
          const sweeper = queue.backend as unknown as { sweep?: () => Promise<unknown> };
          if (typeof sweeper.sweep === "function") await sweeper.sweep();
        }
        await step("event loop blocked", () => blockedLoop(h, jobs, params.blocked));
      }
    }
    if (only("flows") && !queue.backend.capabilities.flows) extras.push({ fault: "flows", detail: "not run: the backend has no flows (capabilities.flows is false, queue.flow answers NOT_SUPPORTED)" });

    // Malformed input, straight into the backend, plus a valid job for a task nobody declared (also straight
    // in: queue.enqueue refuses a task this service does not declare).
    const injected = await injectMalformed(backend, queueName, engineUrl);
    await queue.backend.enqueue({ jobs: [new Job({ task: "chaos.no_such_task", payload: {}, maxAttempts: 3 })] });
    injected.push({ kind: "unknown task", id: null });
    // A real job after the garbage: the workers must still be working.
    const last = h.range(1);
    await h.enqueue(last);
    const malformedT0 = Date.now();
    let dead = await queue.backend.listDead({ limit: 50 });
    while ((dead.length < injected.length || (await h.finished(last)) < 1) && Date.now() - malformedT0 < 30_000 && !h.hopeless()) {
      await new Promise((r) => setTimeout(r, 100));
      dead = await queue.backend.listDead({ limit: 50 });
    }
    const reasons = dead.map((d) => d.lastError?.reason ?? d.lastError?.message ?? "(no reason)");
    if (dead.length !== injected.length) problems.push(`${injected.length} malformed messages injected, ${dead.length} dead letters`);
    if (dead.some((d) => !d.lastError?.reason && !d.lastError?.message)) problems.push("a dead letter carries no reason");
    if ((await h.finished(last)) < 1) problems.push("a real job enqueued after the malformed ones did not run");
    for (const w of workers) if (!w.alive) problems.push(`${w.name} is not running after the malformed messages`);
    extras.push({ fault: "malformed messages", detail: `${injected.map((i) => i.kind).join("; ")} → dead-lettered with: ${[...new Set(reasons)].join("; ")}` });

    // A payload over the configured limit is refused at enqueue, before the backend sees it.
    const refused = await queue
      .enqueue(new Job({ task: "chaos.effect", payload: { n: -2, blob: "x".repeat(MAX_PAYLOAD_BYTES) } }))
      .then(() => null, (error: unknown) => error as { code?: string; message: string });
    if (refused?.code !== "PAYLOAD_TOO_LARGE") problems.push(`an oversized payload was not refused with PAYLOAD_TOO_LARGE (${refused?.message ?? "accepted"})`);
    extras.push({ fault: "payload over max_payload_bytes", detail: refused ? `refused: ${refused.code}` : "ACCEPTED" });
  } catch (error) {
    problems.push(`the run itself failed: ${(error as Error).stack ?? error}`);
  } finally {
    for (const w of workers) await w.stop().catch(() => undefined);
    await jfast?.stop().catch(() => undefined);
    for (const p of proxies) await p.close().catch(() => undefined);
    // Crashes of workers that were running (network scenarios note their own exits and carry on).
    for (const w of workers) problems.push(...w.crashes.filter((c) => !c.includes("while running") || !networkExit(scenarios, c)));
    if (db && !privatePg) await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db?.end().catch(() => undefined);
    await privatePg?.destroy();
    await privateRedis?.destroy();
    await privateRabbit?.destroy();
    if (backend === "rabbitmq-cluster") await dropJfastAmqpQueue(queueName, undefined, rabbitmqClusterFirstUrl()).catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  }
  return { backend, scenarios, extras, problems };
}

/** A worker exit already reported by a network scenario (as "worker A exited: …"). */
function networkExit(scenarios: ScenarioResult[], crash: string): boolean {
  return scenarios.some((s) => s.notes.some((n) => n.startsWith("worker A exited: ") && crash.startsWith(n.slice("worker A exited: ".length))));
}
