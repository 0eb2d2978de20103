/**
 * A throwaway service root for one chaos run: jfast.toml for the backend under test, one module whose task
 * records its effect in PostgreSQL inside its TaskSession, guarded by the inbox (idempotentOn → claimOnce).
 * node_modules is linked in so the module and the CLI resolve the same @jfast/runtime.
 */
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { services } from "../lib/subject.js";
import { rabbitmqClusterUrl } from "./rabbitmq-cluster.js";

/** rabbitmq-cluster: quorum queues on the loopback three-node cluster (docker/rabbitmq-cluster). */
export type ChaosBackend = "postgres" | "redis" | "rabbitmq" | "rabbitmq-cluster";

export const MAX_PAYLOAD_BYTES = 64 * 1024;
/** The workers' lease (visibility_timeout) and poll interval, in seconds: how soon an unsettled job comes back. */
export const VISIBILITY_TIMEOUT_S = 3;
export const POLL_INTERVAL_S = 1;

export async function createServiceRoot(params: { backend: ChaosBackend; schema: string; queue: string; postgresUrl: string }): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), `jfast-chaos-${params.backend}-`));
  const url =
    params.backend === "redis"
      ? services.redis
      : params.backend === "rabbitmq"
        ? services.amqp
        : params.backend === "rabbitmq-cluster"
          ? rabbitmqClusterUrl()
          : null;
  const kind = params.backend === "rabbitmq-cluster" ? `rabbitmq"\nqueue_type = "quorum` : params.backend;
  await writeFile(
    path.join(root, "jfast.toml"),
    [
      `[service]\nname = "chaos"`,
      `[plugins]\nenabled = ["observability", "database", "queue"]`,
      `[plugin.observability]\nlog_level = "error"`,
      `[plugin.database]\nurl = "${params.postgresUrl}"\nschema = "${params.schema}"\npool_size = 6`,
      // A short visibility timeout so a killed worker's jobs come back within seconds; attempts enough for
      // several kills of the same job (each kill -9 mid-attempt spends one).
      `[plugin.queue]\nbackend = "${kind}"\nname = "${params.queue}"\nconcurrency = 8\nmax_attempts = 25\n` +
        `visibility_timeout = ${VISIBILITY_TIMEOUT_S}\npoll_interval = ${POLL_INTERVAL_S}\nbackoff_base = 0.2\nmax_payload_bytes = ${MAX_PAYLOAD_BYTES}` +
        (url ? `\nurl = "${url}"` : ""),
    ].join("\n"),
  );
  await writeFile(path.join(root, "package.json"), JSON.stringify({ name: "chaos-service", private: true, type: "module" }));
  await mkdir(path.join(root, "modules", "chaos"), { recursive: true });
  await writeFile(
    path.join(root, "modules", "chaos", "tasks.ts"),
    `import { sql } from "drizzle-orm";
import { task } from "@jfast/runtime";

// The effect is a row per run of the body; the inbox key in the same transaction makes a redelivery skip it.
export const effect = task(
  "chaos.effect",
  { session: true, idempotentOn: (p: { n: number }) => p.n },
  async (payload: { n: number }, { session }: { session: any }) => {
    await new Promise((r) => setTimeout(r, Math.random() * 8));
    await session.execute(sql\`INSERT INTO ${params.schema}.chaos_effects (n, pid) VALUES (\${payload.n}, \${process.pid})\`);
  },
);
`,
  );
  await symlink(path.resolve(new URL("../../node_modules", import.meta.url).pathname), path.join(root, "node_modules"));
  return root;
}
