import type * as DrizzleOrm from "drizzle-orm";
import { JfastError } from "../errors/jfast-error.js";

/**
 * drizzle-orm is an optional peer (docs/getting-started.md#drivers): a service on raw pg, Knex, Kysely, Prisma or
 * postgres.js does not install it. Loaded once, at import; null when it is not installed.
 */
export const drizzleOrm: typeof DrizzleOrm | null = await import("drizzle-orm").catch((error: unknown) => {
  if (isMissing(error, "drizzle-orm")) return null;
  throw error;
});

/** drizzle-orm, or an error naming the package, for the one thing that needs it. */
export function requireDrizzle(what: string): typeof DrizzleOrm {
  if (drizzleOrm) return drizzleOrm;
  throw new JfastError(`${what} needs drizzle-orm, which is not installed`, {
    code: "DRIVER_MISSING",
    hint: "npm install drizzle-orm, or use the database without it: transaction(fn) hands fn jfast's executor (query(text, params)) when drizzle-orm is absent",
    docs: "jfast docs getting-started#drivers",
  });
}

/** Loads a drizzle-orm entry point (drizzle-orm/node-postgres, drizzle-orm/pglite); null when drizzle-orm is absent. */
export async function importDrizzleEntry<T>(load: () => Promise<T>): Promise<T | null> {
  if (!drizzleOrm) return null;
  return load();
}

function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  const message = String((error as Error).message);
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}
