import { loadConfig, type Jfast, type Outbox } from "@jfast/runtime";
import { CliError, UsageError } from "./errors.js";
import { openService } from "./service.js";

/**
 * Opens the service's outbox for `jfast outbox …` (inspection and repair of dead rows), without its
 * server.ts and without a worker; the app is stopped afterwards whatever happens. A service on the memory
 * queue is refused before anything starts: this process's relay would move pending rows into a queue that
 * lives only as long as the command.
 */
export async function withOutbox<T>(root: string, use: (outbox: Outbox, jfast: Jfast) => Promise<T>): Promise<T> {
  const config = await loadConfig({ root });
  if (!config.outbox) {
    throw new CliError(`the outbox plugin is not enabled in ${config.file}`, {
      code: "OUTBOX_DISABLED",
      hint: `add "outbox" (with "database") to [plugins] enabled`,
      docs: "jfast docs outbox",
    });
  }
  if (config.queue?.backend === "memory") {
    throw new CliError("the memory queue lives inside one process; another process cannot repair its outbox", {
      code: "MEMORY_BACKEND",
      hint: `use backend = "postgres", "redis" or "rabbitmq" in [plugin.queue] to manage the outbox from the command line`,
      docs: "jfast docs outbox#dead-rows",
    });
  }
  const { jfast } = await openService({ root, entry: false, quiet: true, background: false });
  try {
    return await use(jfast.require<Outbox>("outbox"), jfast);
  } finally {
    await jfast.stop();
  }
}

/** `<id>...` or `--all`, never both, never neither. */
export function outboxSelection(all: boolean, ids: string[], verb: string): { ids: string[] } | { all: true } {
  if (all && ids.length > 0) throw new UsageError("give either ids or --all, not both");
  if (!all && ids.length === 0) throw new UsageError(`name the dead rows to ${verb}: jfast outbox ${verb} <id>... or --all`);
  return all ? { all: true } : { ids: [...new Set(ids)] };
}
