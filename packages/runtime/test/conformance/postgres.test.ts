import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import { describePriority } from "./priority.js";
import { describeOutcomes } from "./outcomes.js";
import { describeCancellation } from "./cancellation.js";
import { describeListing } from "./listing.js";
import type { BackendFactory } from "./harness.js";
import { openTestBackend } from "../postgres/pg-test-env.js";
import { createSqlPauseStore } from "../../src/queue/pause-stores.js";

/** The shared suite on the real PostgreSQL server, in a fresh schema per test. */
const postgres: BackendFactory = {
  name: "postgres",
  payloadIndex: true,
  async create() {
    const { backend, cleanup, database } = await openTestBackend();
    return { backend, cleanup, pauses: createSqlPauseStore({ db: database.sql, queue: "jfast.jobs" }) };
  },
};

describeProtocol(postgres);
describeListing(postgres);
describeWorker(postgres);
describePriority(postgres);
describeOutcomes(postgres);
describeCancellation(postgres);

/** The worker's side again with completed rows deleted instead of kept ([plugin.queue] keep_completed = false). */
describeWorker({
  ...postgres,
  name: "postgres, keep_completed = false",
  async create() {
    const { backend, cleanup, database } = await openTestBackend({ keepCompleted: false });
    return { backend, cleanup, pauses: createSqlPauseStore({ db: database.sql, queue: "jfast.jobs" }) };
  },
});
