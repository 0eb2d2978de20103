import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { QUEUE_TUNING } from "./admin-harness.js";
import { describeAdminRouter } from "./admin-router.js";

/** The real PostgreSQL server, a fresh schema per test: the queue and the audit trail (jfast_admin_audit) in it. */
describeAdminRouter(
  "postgres",
  async () => {
    const schema = uniqueSchema("admin");
    return {
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    };
  },
  "sql",
);
