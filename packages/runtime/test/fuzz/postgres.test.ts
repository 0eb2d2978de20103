import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { describeFuzz } from "./describe-fuzz.js";
import { QUEUE_TUNING } from "./fuzz-app.js";

/** The PostgreSQL server, in a schema of its own: the queue and the admin audit trail in it. */
describeFuzz({
  name: "postgres",
  ciRuns: 80,
  async setup() {
    const schema = uniqueSchema("fuzz");
    return {
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    };
  },
});
