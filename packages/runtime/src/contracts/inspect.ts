import path from "node:path";
import { checkContracts } from "./check.js";
import { loadContractsFile, parseContracts } from "./contracts-file.js";
import { buildContractsGraph } from "./graph.js";
import { scanModules, scanModuleSources, type ModuleSource } from "./scan-modules.js";
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
  return inspect(absolute, contracts, await scanModules(absolute));
}

/**
 * The same inspection over files read from elsewhere, such as a git commit (`jfast contracts diff`).
 * `root` names the service in messages (`main:apps/example`); `contracts` is null when there is no
 * contracts.toml; `modules` and `sources` are what `selectModuleFiles` picks from the files under modules/.
 */
export async function inspectContractsSources(params: {
  root: string;
  contracts: { path: string; text: string } | null;
  modules: readonly string[];
  sources: readonly ModuleSource[];
}): Promise<ContractsInspection> {
  const contracts: ContractsFile = params.contracts
    ? parseContracts(params.contracts.path, params.contracts.text)
    : { path: `${params.root}/contracts.toml`, exists: false, modules: {}, services: {} };
  return inspect(params.root, contracts, await scanModuleSources({ modules: params.modules, sources: params.sources }));
}

function inspect(root: string, contracts: ContractsFile, modules: ModuleFacts[]): ContractsInspection {
  const { findings, notes } = checkContracts({ contracts, modules });
  return {
    root,
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
