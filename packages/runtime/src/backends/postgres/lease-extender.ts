import type { LeaseExtender } from "../../core/lease-extender.js";
import { loadSql } from "./sql-file.js";

export interface PostgresLeaseExtenderOptions {
  url: string;
  schema: string;
}

const EXTEND = loadSql("extend-leases");

/**
 * The heartbeat thread's own connection to the server (core/lease-extender.ts): one client, opened at once and
 * opened again after a failure, so a pool busy with the handlers' sessions never delays a heartbeat.
 */
export async function openLeaseExtender(options: PostgresLeaseExtenderOptions): Promise<LeaseExtender> {
  const { default: pg } = await import("pg");
  let client: InstanceType<typeof pg.Client> | null = null;
  const connect = async () => {
    const fresh = new pg.Client({
      connectionString: options.url,
      // The schema is a plain identifier (jfast.toml enforces it), as on the pool's connections.
      options: `-c search_path=${options.schema === "public" ? "public" : `${options.schema},public`}`,
      application_name: "jfast heartbeat",
    });
    fresh.on("error", () => {
      if (client === fresh) client = null;
    });
    await fresh.connect();
    return fresh;
  };
  client = await connect();
  return {
    async extend({ workerId, jobIds, leaseMs }) {
      client ??= await connect();
      try {
        const result = await client.query<{ id: string }>(EXTEND, [jobIds, workerId, leaseMs]);
        return result.rows.map((row) => row.id);
      } catch (error) {
        const broken = client;
        client = null;
        await broken.end().catch(() => undefined);
        throw error;
      }
    },
    async close() {
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
