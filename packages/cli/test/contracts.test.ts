import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { createServiceRoot, REPO_ROOT, runJfast } from "./jfast-process.js";

const FIXTURES = path.join(REPO_ROOT, "packages/runtime/test/fixtures/contracts");
const fixture = (name: string) => path.join(FIXTURES, name);

/**
 * Runs `jfast <args>` in this process (the compiler loads once for the whole file); the exit codes and the
 * real binary are covered by the first test.
 */
async function jfast(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { out: (t) => void (stdout += t), err: (t) => void (stderr += t), cwd: REPO_ROOT });
  return { code, stdout, stderr };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("jfast contracts check", () => {
  it("exit 0 and a one-line summary for a clean service", async () => {
    const result = await runJfast(["contracts", "check", "--root", fixture("clean")]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("contracts ok: 4 modules, 2 event types, 2 subscribers\n");
    const json = await jfast(["contracts", "check", "--json", "--root", fixture("clean")]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it("exit 1 with file, line and fix for each rule; --json is { rule, module, subject, message, fix, file, line }", async () => {
    const cases = [
      ["orphan-subscription", "modules/alert/tasks.ts:4"],
      ["undeclared-event", "modules/receipt/services/register.ts:5"],
      ["undeclared-dependency", "modules/receipt/tasks.ts:6"],
      ["unknown-task", "modules/invoice/tasks.ts:6"],
      ["unknown-module", "contracts.toml"],
    ] as const;
    for (const [rule, where] of cases) {
      const human = await jfast(["contracts", "check", "--root", fixture(rule)]);
      const json = await jfast(["contracts", "check", "--json", "--root", fixture(rule)]);
      expect(human.code, rule).toBe(1);
      expect(human.stdout).toContain(`${where}  ${rule}  [`);
      expect(human.stdout).toContain("  fix: ");
      expect(json.code, rule).toBe(1);
      const findings = JSON.parse(json.stdout) as Record<string, unknown>[];
      expect(findings.length).toBeGreaterThan(0);
      for (const finding of findings) {
        expect(Object.keys(finding).sort()).toEqual(["file", "fix", "line", "message", "module", "rule", "subject"]);
        expect(finding.rule).toBe(rule);
      }
    }
  });

  it("exit 2 with the reason when contracts.toml is broken", async () => {
    const syntax = await runJfast(["contracts", "check", "--root", fixture("broken-toml")]);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toContain("is not valid TOML");
    const schema = await jfast(["contracts", "check", "--json", "--root", fixture("broken-schema")]);
    expect(schema.code).toBe(2);
    expect(schema.stdout).toBe("");
    expect(schema.stderr).toContain("[modules.receipt]: unknown key publish");
    for (const command of [["contracts", "show"], ["contracts", "md", "--stdout"], ["ai", "context"]]) {
      expect((await jfast([...command, "--root", fixture("broken-schema")])).code, command.join(" ")).toBe(2);
    }
  });

  it("a value it cannot read is a note on stderr, not a failure", async () => {
    const result = await jfast(["contracts", "check", "--json", "--root", fixture("unresolved")]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("note: modules/receipt/tasks.ts:5");
  });
});

describe("jfast contracts show, md and ai context", () => {
  it("show --json prints modules and the graph with violations on their edges", async () => {
    const result = await jfast(["contracts", "show", "--json", "--root", fixture("undeclared-dependency")]);
    expect(result.code, result.stderr).toBe(0);
    const graph = JSON.parse(result.stdout);
    expect(graph.source).toBe("contracts");
    expect(graph.modules.map((m: { name: string }) => m.name)).toEqual(["alert", "receipt"]);
    const edge = graph.edges.find((e: { id: string }) => e.id === "depends:module:receipt->module:alert");
    expect(edge.violations.map((v: { code: string }) => v.code)).toEqual(["undeclared-dependency"]);
    const human = await jfast(["contracts", "show", "--root", fixture("clean")]);
    expect(human.stdout).toContain("subscribes: receipt.registered → receipt.registered->alert.checkBudget [session]");
  });

  it("md writes CONTRACTS.md, and --check tells whether it is current", async () => {
    const { root, remove } = await createServiceRoot({
      "jfast.toml": `[service]\nname = "shop"\n`,
      "contracts.toml": `[modules.order]\npublishes = ["order.placed"]\n`,
      "modules/order/tasks.ts": `import { Event } from "@jfast/runtime";\nexport const placed = () => new Event({ type: "order.placed" });\n`,
      "modules/mail/tasks.ts": `import { subscribe } from "@jfast/runtime";\nexport const confirm = subscribe("order.placed", async () => {});\n`,
    });
    cleanups.push(remove);
    expect((await jfast(["contracts", "md", "--check", "--root", root])).code).toBe(1);
    const written = await jfast(["contracts", "md", "--root", root]);
    expect(written.code, written.stderr).toBe(0);
    const text = await readFile(path.join(root, "CONTRACTS.md"), "utf8");
    expect(text).toContain("# Contracts of shop");
    expect(text).toContain("| `order.placed` | order | `order.placed->mail.confirm` |");
    expect((await jfast(["contracts", "md", "--check", "--root", root])).code).toBe(0);
  });

  it("ai context names the service, its modules, schedules, events and the contract state", async () => {
    const result = await jfast(["ai", "context", "--root", fixture("clean")]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("service clean: plugins none");
    expect(result.stdout).toContain("receipt: publishes receipt.registered; tasks receipt.extract (session)");
    expect(result.stdout).toContain('schedules: billing.charge cron "0 3 * * *" in "America/Mexico_City"');
    expect(result.stdout).toContain("receipt.registered: receipt → alert");
    expect(result.stdout).toContain("contracts: ok");
  });
});
