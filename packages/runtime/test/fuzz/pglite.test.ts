import { createPostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { migrate } from "../../src/database/migrate.js";
import { createPgliteDatabase, wrapPglite } from "../../src/database/pglite-database.js";
import { describeFuzz } from "./describe-fuzz.js";
import { QUEUE_TUNING } from "./fuzz-app.js";

/** The PostgreSQL queue on embedded PGlite, in memory: the same SQL as the server, in WebAssembly. */
describeFuzz({
  name: "pglite",
  ciRuns: 70,
  dropsLeadingBom: true,
  async setup() {
    const { client } = await createPgliteDatabase({ dataDir: "memory://", schema: "public" });
    const db = wrapPglite(client);
    await migrate({ db, schema: "public" });
    const backend = createPostgresBackend({ db, schema: "public", queue: "jfast.jobs" });
    return {
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`,
      backend,
      cleanup: () => client.close(),
    };
  },
});
