import { z } from "zod";
import type { PostgresBackendOptions } from "./postgres-backend.js";

/** `[plugin.queue]` keys only the PostgreSQL queue reads (with the keys every queue has). */
export const postgresQueueKeys = {
  backend: z.literal("postgres"),
  /**
   * A claim commits as every other write does, under the server's synchronous_commit (on by default), instead
   * of with synchronous_commit off for its own transaction (docs/postgres.md#durability-of-claims).
   */
  durable_claims: z.boolean().default(false),
};

type Section = z.output<z.ZodObject<typeof postgresQueueKeys>>;

export interface PostgresQueueConfig {
  backend: "postgres";
  /** The queue lives in the database plugin's database: it has no url of its own. */
  url: null;
  /** `durable_claims`: a claim waits for its WAL flush. */
  durableClaims: boolean;
}

export const postgresQueue = {
  backend: "postgres",
  label: "the PostgreSQL queue",
  keys: postgresQueueKeys,
  resolve(section: Section): PostgresQueueConfig {
    return { backend: "postgres", url: null, durableClaims: section.durable_claims };
  },
  /** What the configuration decides of one named queue's backend; the database and the logger are the caller's. */
  toOptions(config: PostgresQueueConfig, queue: { backendName: string; keepCompleted: boolean }): Pick<PostgresBackendOptions, "queue" | "keepCompleted" | "durableClaims"> {
    return { queue: queue.backendName, keepCompleted: queue.keepCompleted, durableClaims: config.durableClaims };
  },
} as const;
