import { describeProtocol } from "./protocol.js";
import { describeWorker } from "./worker.js";
import type { BackendFactory } from "./harness.js";
import { openTestBackend } from "../postgres/pg-test-env.js";

/** The shared suite on the real PostgreSQL server, in a fresh schema per test. */
const postgres: BackendFactory = {
  name: "postgres",
  async create() {
    const { backend, cleanup } = await openTestBackend();
    return { backend, cleanup };
  },
};

describeProtocol(postgres);
describeWorker(postgres);
