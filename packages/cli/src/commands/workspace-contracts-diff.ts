import path from "node:path";
import type { ServiceContractsDiff } from "@jfast/runtime";
import { defineCommand, WORKSPACE_ROOT_FLAG } from "../command.js";
import { BROKEN_CONTRACTS } from "../contracts-access.js";
import { DIFF_FLAGS, diffExitCode, diffServiceContracts, renderDiff, requireBase } from "./contracts-diff.js";
import { requireWorkspaceServices, resolveWorkspaceRoot } from "./deploy.js";

export default defineCommand({
  name: "workspace contracts diff",
  summary: "jfast contracts diff for every service of the workspace",
  description: `
Runs jfast contracts diff --base REF for every service of the workspace (the directories its package.json
"workspaces" name that hold a jfast.toml) and prints one report: the text summary per service, one
pull-request comment with a section and a diagram per service (--md), or
{ services: [{ service, dir, added, removed, newViolations, fixedViolations }] } (--json). A service that
did not exist at REF has every edge added. Exit code 0 without new violations, 1 with new violations in any
service, 2 when a contracts.toml is broken on either side or git cannot read the ref.`,
  flags: {
    ...DIFF_FLAGS,
    root: WORKSPACE_ROOT_FLAG,
  },
  examples: ["jfast workspace contracts diff --base origin/main", "jfast workspace contracts diff --base origin/main --md > contracts-comment.md"],
  docs: "jfast docs contracts#every-service-of-a-workspace",
  async run({ flags, io }) {
    const ref = requireBase(flags);
    const workspace = resolveWorkspaceRoot(flags.root, io.cwd);
    const services = await requireWorkspaceServices(workspace, "jfast docs contracts#every-service-of-a-workspace");
    const diffs: Array<ServiceContractsDiff & { dir: string }> = [];
    let broken = false;
    // One after the other: each side runs the TypeScript parser over a service's modules.
    for (const service of [...services].sort((a, b) => a.dir.localeCompare(b.dir))) {
      const name = service.config.service.name;
      const diff = await diffServiceContracts({ root: path.join(workspace, service.dir), ref, name, io });
      if (diff) diffs.push({ ...diff, dir: service.dir });
      else broken = true;
    }
    if (broken) return BROKEN_CONTRACTS;
    if (flags.json) {
      const services = diffs.map(({ name, dir, diff }) => ({ service: name, dir, ...diff }));
      io.out(`${JSON.stringify({ services }, null, 2)}\n`);
    } else {
      io.out(renderDiff({ ref, services: diffs, md: flags.md }));
    }
    return diffExitCode(diffs);
  },
});
