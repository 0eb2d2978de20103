import path from "node:path";
import { checkContracts } from "./check.js";
import { loadContractsFile } from "./contracts-file.js";
import { buildContractsGraph } from "./graph.js";
import { scanModules } from "./scan-modules.js";
import type { ContractFinding, ContractsFile, ContractsGraph, ModuleFacts } from "./types.js";

/** Everything `jfast contracts check | show | md` and `jfast ai context` print, read once. */
export interface ContractsInspection {
  root: string;
  contracts: ContractsFile;
  modules: ModuleFacts[];
  findings: ContractFinding[];
  notes: string[];
  graph: ContractsGraph;
}

/**
 * Reads `<root>/contracts.toml` and the sources under `<root>/modules/`, and checks one against the other.
 * Throws ContractsFileError when contracts.toml is broken. Runs no service code.
 */
export async function inspectContracts(root: string): Promise<ContractsInspection> {
  const absolute = path.resolve(root);
  const contracts = await loadContractsFile(absolute);
  const modules = await scanModules(absolute);
  const { findings, notes } = checkContracts({ contracts, modules });
  return {
    root: absolute,
    contracts,
    modules,
    findings: findings.map((f) => f.finding),
    notes,
    graph: buildContractsGraph({ contracts, modules, findings }),
  };
}

/** The structure `jfast contracts show --json` prints and the dashboard draws. */
export async function contractsGraph(root: string): Promise<ContractsGraph> {
  return (await inspectContracts(root)).graph;
}
