import pg from "pg";

/** The machine's own services the CLI's tests run against (trust auth on PostgreSQL; a missing one fails the test). */
export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = "redis://127.0.0.1:6379";

/** One statement on a short-lived connection of its own: the rows. */
export async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** A service's jfast.toml with its database in `schema` and its jobs on the Redis queue `queue`, through the outbox. */
export function redisServiceToml(params: { schema: string; queue: string }): string {
  return [
    `[service]\nname = "svc"`,
    `[plugins]\nenabled = ["database", "queue", "outbox"]`,
    `[plugin.database]\nurl = "${PG_URL}"\nschema = "${params.schema}"`,
    `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${params.queue}"`,
    `[plugin.outbox]\npoll_interval = 30`,
  ].join("\n");
}
