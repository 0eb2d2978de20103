import { describe, expect, it } from "vitest";
import { diffContracts, isEmptyDiff } from "./diff.js";
import { renderDiffMermaid } from "./diff-mermaid.js";
import { inspectContractsSources, type ContractsInspection } from "./inspect.js";
import { formatContractsDiff, renderContractsDiffMarkdown } from "./render-diff.js";
import { selectModuleFiles } from "./scan-modules.js";

const CONTRACTS = `
[modules.receipt]
publishes = ["receipt.registered"]
[modules.alert]
`;
const RECEIPT = `import { Event } from "@jfast/runtime";
export function register() {
  return new Event({ type: "receipt.registered", data: {} });
}
`;
const ALERT = `import { subscribe } from "@jfast/runtime";
export const checkBudget = subscribe("receipt.registered", async () => {});
`;

/** A service made of in-memory files: contracts.toml (or none) and modules/<name>/<file> sources. */
function service(files: Record<string, string>): Promise<ContractsInspection> {
  const paths = Object.keys(files).filter((p) => p !== "contracts.toml");
  const { modules, sources } = selectModuleFiles(paths);
  return inspectContractsSources({
    root: "svc",
    contracts: files["contracts.toml"] === undefined ? null : { path: "svc/contracts.toml", text: files["contracts.toml"] },
    modules,
    sources: sources.map((p) => ({ path: p, text: files[p]! })),
  });
}

const baseFiles = { "contracts.toml": CONTRACTS, "modules/receipt/register.ts": RECEIPT, "modules/alert/tasks.ts": ALERT };

describe("diffContracts", () => {
  it("the same service on both sides is no change", async () => {
    const diff = diffContracts(await service(baseFiles), await service(baseFiles));
    expect(diff).toEqual({ added: [], removed: [], newViolations: [], fixedViolations: [] });
    expect(isEmptyDiff(diff)).toBe(true);
  });

  it("a module that starts listening is an added subscribes edge, event → module", async () => {
    const head = await service({
      ...baseFiles,
      "modules/invoice/tasks.ts": `import { subscribe } from "@jfast/runtime";\nexport const draft = subscribe("receipt.registered", async () => {});\n`,
    });
    const diff = diffContracts(await service(baseFiles), head);
    expect(diff.added).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "invoice" }]);
    expect(diff.removed).toEqual([]);
    expect(diff.newViolations).toEqual([]);
  });

  it("a renamed module removes its edges and adds them under the new name", async () => {
    const { "modules/alert/tasks.ts": alert, ...rest } = baseFiles;
    const head = await service({ ...rest, "contracts.toml": CONTRACTS.replace("[modules.alert]", "[modules.notify]"), "modules/notify/tasks.ts": alert });
    const diff = diffContracts(await service(baseFiles), head);
    expect(diff.added).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "notify" }]);
    expect(diff.removed).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "alert" }]);
    expect(diff.newViolations).toEqual([]);
  });

  it("a misspelt subscription is a new violation; fixing it later is a fixed one", async () => {
    const typo = { ...baseFiles, "modules/alert/tasks.ts": ALERT.replace("receipt.registered", "receipt.registred") };
    const forward = diffContracts(await service(baseFiles), await service(typo));
    expect(forward.added).toEqual([{ kind: "subscribes", from: "receipt.registred", to: "alert" }]);
    expect(forward.removed).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "alert" }]);
    expect(forward.newViolations.map((f) => [f.rule, f.module, f.subject, f.file, f.line])).toEqual([
      ["orphan-subscription", "alert", "receipt.registred", "modules/alert/tasks.ts", 2],
    ]);
    const back = diffContracts(await service(typo), await service(baseFiles));
    expect(back.newViolations).toEqual([]);
    expect(back.fixedViolations.map((f) => f.rule)).toEqual(["orphan-subscription"]);
  });

  it("a violation whose line moves is neither new nor fixed", async () => {
    const undeclared = { ...baseFiles, "contracts.toml": "[modules.alert]\n" };
    const moved = { ...undeclared, "modules/receipt/register.ts": `// a comment\n\n${RECEIPT}` };
    const diff = diffContracts(await service(undeclared), await service(moved));
    expect(diff).toEqual({ added: [], removed: [], newViolations: [], fixedViolations: [] });
  });

  it("a declaration dropped from contracts.toml keeps the code's edge and shows up as a violation", async () => {
    const diff = diffContracts(await service(baseFiles), await service({ ...baseFiles, "contracts.toml": "[modules.receipt]\n[modules.alert]\n" }));
    expect(diff.added).toEqual([]);
    expect(diff.removed).toEqual([]);
    expect(diff.newViolations.map((f) => f.rule).sort()).toEqual(["orphan-subscription", "undeclared-event"]);
  });

  it("depends_on edges are module → module", async () => {
    const head = await service({
      ...baseFiles,
      "contracts.toml": `${CONTRACTS}depends_on = ["receipt"]\n`,
    });
    expect(diffContracts(await service(baseFiles), head).added).toEqual([{ kind: "depends_on", from: "alert", to: "receipt" }]);
  });
});

describe("selectModuleFiles", () => {
  it("keeps module code and leaves out tests, declarations, skipped and hidden directories", () => {
    const picked = selectModuleFiles([
      "modules/a/tasks.ts",
      "modules/a/tasks.test.ts",
      "modules/a/types.d.ts",
      "modules/a/README.md",
      "modules/a/node_modules/x/index.js",
      "modules/a/__tests__/x.ts",
      "modules/a/.hidden/x.ts",
      "modules/a/lib/z.ts",
      "modules/a/lib.ts",
      "modules/b/README.md",
      "modules/.cache/x.ts",
      "modules/stray.ts",
    ]);
    expect(picked.modules).toEqual(["a", "b"]);
    expect(picked.sources).toEqual(["modules/a/lib/z.ts", "modules/a/lib.ts", "modules/a/tasks.ts"]);
  });
});

describe("rendering a diff", () => {
  it("--md marks added edges and new violations in a mermaid block", async () => {
    const base = await service(baseFiles);
    const head = await service({
      ...baseFiles,
      "modules/invoice/tasks.ts": `import { subscribe } from "@jfast/runtime";\nexport const draft = subscribe("receipt.paid", async () => {});\n`,
    });
    const diff = diffContracts(base, head);
    const diagram = renderDiffMermaid({ base, head, diff })!;
    expect(diagram.split("\n")[0]).toBe("flowchart LR");
    expect(diagram).toMatch(/n\d+ ==>\|added, orphan-subscription\| n\d+/);
    expect(diagram).toContain('(["receipt.paid"]):::added');
    expect(diagram).toMatch(/linkStyle 0 stroke:#cf222e/);

    const md = renderContractsDiffMarkdown({ ref: "main", services: [{ name: null, base, head, diff }] });
    expect(md.startsWith("<!-- jfast contracts diff -->\n## Contract changes\n")).toBe(true);
    expect(md).toContain("1 edge added, 0 removed, 1 new violation, 0 fixed");
    expect(md).toContain("| added | subscribes | `receipt.paid` | `invoice` |");
    expect(md).toContain("- **orphan-subscription** in `invoice`, `receipt.paid` (`modules/invoice/tasks.ts:2`)");
    expect(md).toContain("```mermaid\nflowchart LR\n");
  });

  it("the diagram shows the other publishers and subscribers of an event that gained a subscriber", async () => {
    const base = await service(baseFiles);
    const head = await service({
      ...baseFiles,
      "modules/invoice/tasks.ts": `import { subscribe } from "@jfast/runtime";\nexport const draft = subscribe("receipt.registered", async () => {});\n`,
    });
    const diagram = renderDiffMermaid({ base, head, diff: diffContracts(base, head) })!;
    const names = new Map([...diagram.matchAll(/(n\d+)[[(]+"([^"]+)"/g)].map((m) => [m[2], m[1]]));
    expect([...names.keys()].sort()).toEqual(["alert", "invoice", "receipt", "receipt.registered"]);
    expect(diagram).toContain(`${names.get("receipt.registered")} ==>|added| ${names.get("invoice")}`);
    expect(diagram).toContain(`${names.get("receipt")} --> ${names.get("receipt.registered")}`);
    expect(diagram).toContain(`${names.get("receipt.registered")} --> ${names.get("alert")}`);
    expect(diagram).toContain(":::added");
  });

  it("the comment keeps the placeholders of a fix literal and names the new depends_on edge", async () => {
    const base = await service(baseFiles);
    const head = await service({
      ...baseFiles,
      "modules/receipt/tasks.ts": `import { task } from "@jfast/runtime";\nexport const extract = task("receipt.extract", async () => {});\n`,
      "modules/alert/enqueue.ts": `import { Job } from "@jfast/runtime";\nexport const again = () => new Job({ task: "receipt.extract", payload: {} });\n`,
    });
    const diff = diffContracts(base, head);
    expect(diff.added).toEqual([{ kind: "depends_on", from: "alert", to: "receipt" }]);
    const md = renderContractsDiffMarkdown({ ref: "main", services: [{ name: null, base, head, diff }] });
    expect(md).toContain("- **undeclared-dependency** in `alert`, `receipt.extract` (`modules/alert/enqueue.ts:2`)");
    expect(md).toContain('outbox.publish(session, "&lt;topic>"');
    expect(md).not.toContain("<topic>");
    expect(md).toMatch(/==>\|depends on, added, undeclared-dependency\|/);
  });

  it("no change: one line of text, a comment that says so, and no diagram", async () => {
    const side = await service(baseFiles);
    const diff = diffContracts(side, side);
    expect(renderDiffMermaid({ base: side, head: side, diff })).toBeNull();
    expect(formatContractsDiff({ ref: "main", services: [{ name: null, base: side, head: side, diff }] })).toBe("no contract changes against main");
    const md = renderContractsDiffMarkdown({ ref: "main", services: [{ name: null, base: side, head: side, diff }] });
    expect(md).toContain("No contract changes against `main`.");
    expect(md).not.toContain("mermaid");
  });
});
