import {
  ContractsFileError,
  diffContracts,
  diffPayloadSchemas,
  formatContractsDiff,
  inspectContracts,
  renderContractsDiffMarkdown,
  type ContractsInspection,
  type ServiceContractsDiff,
} from "@jfast/runtime";
import { defineCommand, ROOT_FLAG, type CommandIO } from "../command.js";
import { BROKEN_CONTRACTS } from "../contracts-access.js";
import { CliError, UsageError } from "../errors.js";
import { resolveRoot } from "../service.js";
import { inspectContractsAtRef, payloadSchemasAtRef, payloadSchemasNow } from "./contracts-at-ref.js";

/** The flags `contracts diff` and `workspace contracts diff` share. */
export const DIFF_FLAGS = {
  base: { type: "string", placeholder: "REF", description: "the git ref to compare with (a branch, tag or commit: origin/main, HEAD~1)" },
  json: { type: "boolean", description: "print { added, removed, newViolations, fixedViolations } as JSON" },
  md: { type: "boolean", description: "print a pull-request comment in Markdown, with a Mermaid diagram" },
} as const;

export default defineCommand({
  name: "contracts diff",
  summary: "what a change does to the contracts: edges added and removed, violations new and fixed",
  description: `
Compares the contracts of the service at a git ref (contracts.toml and the sources under modules/, read
from git without checking anything out) with the working tree: publishes (module → event), subscribes
(event → module) and depends_on (module → module) edges added and removed, and the checker's findings that
are new or fixed, and each task's payload schema change, classed breaking (a field removed or newly required,
a type narrowed) or compatible: the tasks files of both sides are imported for their schemas (nothing runs).
--json prints { added, removed, newViolations, fixedViolations, payloads }, each finding shaped as in jfast
contracts check --json; --md prints a pull-request comment with a Mermaid diagram of the part of the graph the
change touches. Exit code 0 without new violations or breaking payload changes, 1 with either, 2 when either
side's contracts.toml is broken or git cannot read the ref.`,
  flags: { ...DIFF_FLAGS, root: ROOT_FLAG },
  examples: [
    "jfast contracts diff --base origin/main",
    "jfast contracts diff --base origin/main --md > contracts-comment.md",
    "jfast contracts diff --base HEAD~1 --json | jq '.added'",
  ],
  docs: "jfast docs contracts#jfast-contracts-diff",
  async run({ flags, io }) {
    const ref = requireBase(flags);
    const root = resolveRoot(flags.root, io.cwd);
    const service = await diffServiceContracts({ root, ref, name: null, io });
    if (!service) return BROKEN_CONTRACTS;
    io.out(flags.json ? `${JSON.stringify(service.diff, null, 2)}\n` : renderDiff({ ref, services: [service], md: flags.md }));
    return diffExitCode([service]);
  },
});

/** --base is required and --json and --md exclude each other. */
export function requireBase(flags: { base?: string | undefined; json: boolean; md: boolean }): string {
  if (flags.json && flags.md) throw new UsageError("--json and --md cannot be used together");
  if (!flags.base) throw new UsageError("--base needs a git ref to compare with, e.g. --base origin/main");
  return flags.base;
}

/**
 * Both sides of one service. Null, with the reasons on stderr, when contracts.toml is broken on either side
 * or git cannot read the ref: there is nothing to compare, and the caller exits with BROKEN_CONTRACTS.
 */
export async function diffServiceContracts(params: { root: string; ref: string; name: string | null; io: CommandIO }): Promise<ServiceContractsDiff | null> {
  const { root, ref, name, io } = params;
  const sides = await Promise.all([readSide(() => inspectContractsAtRef({ root, ref }), io), readSide(() => inspectContracts(root), io)]);
  const [base, head] = sides;
  if (!base || !head) return null;
  const diff = diffContracts(base, head);
  try {
    const [before, after] = [await payloadSchemasAtRef({ root, ref }), await payloadSchemasNow(root)];
    const payloads = diffPayloadSchemas(before, after);
    if (payloads.length > 0) diff.payloads = payloads;
  } catch (error) {
    // The contracts still compare: say why the schemas did not (a tasks file that fails to import on one side).
    diff.payloadsNotCompared = (error as Error).message.split("\n")[0]!;
  }
  return { name, base, head, diff };
}

export function renderDiff(params: { ref: string; services: ServiceContractsDiff[]; md: boolean }): string {
  return params.md ? renderContractsDiffMarkdown(params) : `${formatContractsDiff(params)}\n`;
}

/** 1 when the change adds a violation or breaks a payload schema anywhere; additions, removals and fixes alone are fine. */
export function diffExitCode(services: readonly ServiceContractsDiff[]): number {
  return services.some((s) => s.diff.newViolations.length > 0 || (s.diff.payloads ?? []).some((p) => p.class === "breaking")) ? 1 : 0;
}

async function readSide(read: () => Promise<ContractsInspection>, io: CommandIO): Promise<ContractsInspection | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ContractsFileError || error instanceof CliError) {
      io.err(`jfast: ${error.message}\n`);
      return null;
    }
    throw error;
  }
}
