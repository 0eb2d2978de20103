import { ContractsFileError, inspectContracts, loadConfig, type ContractsInspection, type ServiceSummary } from "@jfast/runtime";
import type { CommandIO } from "./command.js";
import { resolveRoot } from "./service.js";

/** Exit code of every contracts command when contracts.toml cannot be read: the contract itself is broken. */
export const BROKEN_CONTRACTS = 2;

/**
 * Reads contracts.toml and the module sources of the service at `--root` (nothing is imported or run).
 * A broken contracts.toml is printed with its reason and yields null: the caller exits with BROKEN_CONTRACTS.
 */
export async function readContracts(rootFlag: string | undefined, io: CommandIO): Promise<ContractsInspection | null> {
  const root = resolveRoot(rootFlag, io.cwd);
  try {
    return await inspectContracts(root);
  } catch (error) {
    if (error instanceof ContractsFileError) {
      io.err(`jfast: ${error.message}\n`);
      return null;
    }
    throw error;
  }
}

/** Name, plugins and queue backend from jfast.toml; null (with a note on stderr) when it does not load. */
export async function readServiceSummary(root: string, io: CommandIO): Promise<ServiceSummary | null> {
  try {
    const config = await loadConfig({ root });
    return { name: config.service.name, plugins: [...config.plugins], queueBackend: config.queue?.backend ?? null };
  } catch (error) {
    io.err(`jfast: note: jfast.toml did not load, so the service's name and plugins are left out: ${(error as Error).message.split("\n")[0]}\n`);
    return null;
  }
}
