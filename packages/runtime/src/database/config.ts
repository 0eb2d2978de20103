import { z } from "zod";
import { ConfigError } from "../errors/jfast-error.js";

/** `[plugin.database]`. */
export const databaseSchema = z.strictObject({
  url: z.string().optional(),
  /** A streaming replica the dashboard's and /metrics' reads go to, so they do not load the primary. */
  read_url: z.string().optional(),
  rls: z.boolean().default(false),
  schema: z.string().regex(/^[a-z_][a-z0-9_]*$/).default("public"),
  pool_size: z.number().int().min(1).max(200).default(10),
  inbox_retention_days: z.number().positive().default(7),
});

export interface DatabaseConfig {
  /** null: embedded PGlite under `<root>/.jfast/`. */
  url: string | null;
  /** A read replica for the admin API's and /metrics' reads (`[plugin.database] read_url`, DATABASE_READ_URL); null: the primary. */
  readUrl: string | null;
  rls: boolean;
  schema: string;
  poolSize: number;
  inboxRetentionDays: number;
}

/** `[plugin.database]` with DATABASE_URL and DATABASE_READ_URL over its urls. */
export function resolveDatabase(section: z.output<typeof databaseSchema> | undefined, at: { file: string; env: NodeJS.ProcessEnv }): DatabaseConfig {
  const database = section ?? databaseSchema.parse({});
  const url = at.env.DATABASE_URL || database.url || null;
  const readUrl = at.env.DATABASE_READ_URL || database.read_url || null;
  if (readUrl && !url) {
    throw new ConfigError(`${at.file}: [plugin.database] read_url names a replica, but the database has no url (it runs embedded, which has no replicas)`, {
      code: "CONFIG_INVALID",
      hint: "set DATABASE_URL / [plugin.database] url to the primary server, or remove read_url (DATABASE_READ_URL)",
      docs: "jfast docs postgres#reading-from-a-replica",
    });
  }
  return { url, readUrl, rls: database.rls, schema: database.schema, poolSize: database.pool_size, inboxRetentionDays: database.inbox_retention_days };
}
