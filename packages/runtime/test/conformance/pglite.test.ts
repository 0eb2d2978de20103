import type { PGlite } from "@electric-sql/pglite";
import { describeStats } from "./stats.js";
import { afterAll, beforeAll } from "vitest";
import { createPostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { migrate } from "../../src/database/migrate.js";
import { createPgliteDatabase, wrapPglite } from "../../src/database/pglite-database.js";
import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeUnique } from "./unique.js";
import { describeLimits } from "./limits.js";
import { describeKeyLimits } from "./key-limits.js";
import { describeFairShare } from "./fair-share.js";
import { describeKeyedDepths } from "./keyed-depths.js";
import { describeOrderPerKey } from "./order-per-key.js";
import { describeRetention } from "./retention.js";
import { describeResults } from "./results.js";
import { describeDeadlines } from "./deadlines.js";
import { describeDebounce } from "./debounce.js";
import { describeJobLife } from "./job-life.js";
import { describeWorkers } from "./workers.js";
import { describeFlows } from "./flows.js";
import { createSqlPauseStore } from "../../src/queue/pause-stores.js";
import { describeListing } from "./listing.js";
import { describeJobUpdate } from "./job-update.js";
import { describeQueues } from "./queues.js";
import { backendQueueName } from "../../src/core/named-queue.js";
import type { BackendFactory } from "./harness.js";
import { postgresCapabilities } from "../../src/backends/postgres/capabilities.js";

/**
 * The same suite on embedded PGlite, in memory: the same SQL files through the same port. Starting a
 * PGlite costs seconds (initdb in WebAssembly), so the file shares one in-memory database and gives each
 * test its own schema, exactly as the PostgreSQL entry does on the server. Tests in a file run one after
 * another, so switching the single connection's search_path per test is safe.
 */
let shared: Promise<PGlite> | null = null;
let counter = 0;

function sharedPglite(): Promise<PGlite> {
  shared ??= createPgliteDatabase({ dataDir: "memory://", schema: "public" }).then((db) => db.client);
  return shared;
}

// Started once up front with room to spare: initdb alone takes seconds, far more on a loaded machine.
beforeAll(() => sharedPglite().then(() => undefined), 240_000);

afterAll(async () => {
  const pglite = await shared;
  shared = null;
  await pglite?.close();
});

const pglite: BackendFactory = {
  name: "pglite",
  // Embedded: no connection URL another thread could open.
  capabilities: postgresCapabilities({}),
  async create() {
    const client = await sharedPglite();
    const schema = `jfast_conformance_${++counter}`;
    await client.exec(`SET search_path TO ${schema}, public`);
    const db = wrapPglite(client);
    await migrate({ db, schema });
    const backend = createPostgresBackend({ db, schema, queue: "jfast.jobs" });
    await backend.setup();
    return {
      backend,
      pauses: createSqlPauseStore({ db, queue: "jfast.jobs" }),
      async cleanup() {
        await backend.close();
        await client.exec(`DROP SCHEMA ${schema} CASCADE`);
      },
    };
  },
  /** The service's named queues: rows of one jfast_jobs table, each queue's under its own `queue` value. */
  async createQueues(names) {
    const client = await sharedPglite();
    const schema = `jfast_conformance_${++counter}`;
    await client.exec(`SET search_path TO ${schema}, public`);
    const db = wrapPglite(client);
    await migrate({ db, schema });
    const entries = names.map((name) => {
      const queue = backendQueueName("jfast.jobs", name);
      return { name, queue, backend: createPostgresBackend({ db, schema, queue }) };
    });
    for (const e of entries) await e.backend.setup();
    return {
      backends: Object.fromEntries(entries.map((e) => [e.name, e.backend])),
      pauses: Object.fromEntries(entries.map((e) => [e.name, createSqlPauseStore({ db, queue: e.queue })])),
      async cleanup() {
        for (const e of entries) await e.backend.close();
        await client.exec(`DROP SCHEMA ${schema} CASCADE`);
      },
    };
  },
};

describeProtocol(pglite);
describeListing(pglite);
describeJobUpdate(pglite);
describeWorker(pglite);
describePriority(pglite);
describeOutcomes(pglite);
describeCancellation(pglite);
describeQueues(pglite);
describeUnique(pglite);
describeLimits(pglite);
describeKeyLimits(pglite);
describeFairShare(pglite);
describeKeyedDepths(pglite);
describeOrderPerKey(pglite);
describeRetention(pglite);
describeResults(pglite);
describeDeadlines(pglite);
describeDebounce(pglite);
describeJobLife(pglite);
describeFlows(pglite);
describeWorkers(pglite);

/** jfast_stats in the embedded database; each process a backend and store over the one connection. */
describeStats(pglite, async () => {
  const client = await sharedPglite();
  const schema = `jfast_conformance_${++counter}`;
  await client.exec(`SET search_path TO ${schema}, public`);
  const db = wrapPglite(client);
  await migrate({ db, schema });
  return {
    durable: true,
    async process() {
      const backend = createPostgresBackend({ db, schema, queue: "jfast.jobs" });
      return { backend, database: { sql: db }, queue: "jfast.jobs", close: () => backend.close() };
    },
    cleanup: () => client.exec(`DROP SCHEMA ${schema} CASCADE`).then(() => undefined),
  };
});
