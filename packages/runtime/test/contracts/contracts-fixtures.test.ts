import path from "node:path";
import { describe, expect, it } from "vitest";
import { ContractsFileError } from "../../src/contracts/contracts-file.js";
import { inspectContracts } from "../../src/contracts/inspect.js";
import { renderContractsMarkdown } from "../../src/contracts/render.js";

const fixture = (name: string) => path.join(import.meta.dirname, "../fixtures/contracts", name);
const summary = (findings: { rule: string; module: string; subject: string; file: string | null; line: number | null }[]) =>
  findings.map((f) => ({ rule: f.rule, module: f.module, subject: f.subject, at: f.file ? `${f.file}:${f.line}` : null }));

describe("contracts fixtures", () => {
  it("a clean service reports nothing, though it uses aliases, namespaces, constants, tests and look-alikes", async () => {
    const inspection = await inspectContracts(fixture("clean"));
    expect(inspection.findings).toEqual([]);
    expect(inspection.notes).toEqual([]);
    const alert = inspection.graph.modules.find((m) => m.name === "alert")!;
    expect(alert.subscribes).toEqual([
      { event: "receipt.registered", task: "receipt.registered->alert.checkBudget", session: true },
      { event: "billing.invoice_paid", task: "billing.invoice_paid->alert.notifyFinance", session: false },
    ]);
    // The spec file inside the module built "receipt.something_else"; it is not the module's contract.
    expect(inspection.graph.modules.find((m) => m.name === "receipt")!.emits).toEqual(["receipt.registered"]);
    expect(inspection.modules.find((m) => m.name === "receipt")!.files).not.toContain("modules/receipt/register-receipt.spec.ts");
  });

  it("orphan-subscription: a subscriber to a type nobody declares, with the likely typo", async () => {
    const { findings } = await inspectContracts(fixture("orphan-subscription"));
    expect(summary(findings)).toEqual([
      { rule: "orphan-subscription", module: "alert", subject: "receipt.registred", at: "modules/alert/tasks.ts:4" },
    ]);
    expect(findings[0]!.message).toContain("receipt.registred->alert.checkBudget");
    expect(findings[0]!.fix).toContain('did you mean "receipt.registered"');
  });

  it("undeclared-event: an event built in a module that does not declare it", async () => {
    const { findings } = await inspectContracts(fixture("undeclared-event"));
    expect(summary(findings)).toEqual([
      { rule: "undeclared-event", module: "receipt", subject: "receipt.registered", at: "modules/receipt/services/register.ts:5" },
    ]);
    expect(findings[0]!.fix).toBe('add "receipt.registered" to publishes in [modules.receipt] of contracts.toml');
  });

  it("undeclared-dependency: enqueueing another module's task by name suggests the event to publish instead", async () => {
    const { findings, graph } = await inspectContracts(fixture("undeclared-dependency"));
    expect(summary(findings)).toEqual([
      { rule: "undeclared-dependency", module: "receipt", subject: "alert.notify", at: "modules/receipt/tasks.ts:6" },
    ]);
    expect(findings[0]!.fix).toContain('subscribe("receipt.registered", ...) in modules/alert/tasks.ts');
    expect(findings[0]!.fix).toContain('add "alert" to depends_on in [modules.receipt]');
    // On the graph the violation sits on the undeclared receipt → alert edge.
    const edge = graph.edges.find((e) => e.id === "depends:module:receipt->module:alert")!;
    expect(edge).toMatchObject({ kind: "depends", declared: false, labels: ["alert.notify"] });
    expect(edge.violations.map((v) => v.code)).toEqual(["undeclared-dependency"]);
  });

  it("unknown-module: a contracts table or a depends_on entry with no module directory", async () => {
    const { findings, graph } = await inspectContracts(fixture("unknown-module"));
    expect(summary(findings)).toEqual([
      { rule: "unknown-module", module: "receipt", subject: "invoce", at: null },
      { rule: "unknown-module", module: "recept", subject: "recept", at: null },
    ]);
    expect(findings.map((f) => f.fix)).toEqual([expect.stringContaining('"invoice"'), expect.stringContaining('"receipt"')]);
    expect(graph.violations).toHaveLength(2);
  });

  it("unknown-task: a job for a task no module declares", async () => {
    const { findings } = await inspectContracts(fixture("unknown-task"));
    expect(summary(findings)).toEqual([
      { rule: "unknown-task", module: "invoice", subject: "invoice.send_mail", at: "modules/invoice/tasks.ts:6" },
    ]);
    expect(findings[0]!.fix).toContain('"invoice.send_email"');
  });

  it("what cannot be resolved is a note, never a finding", async () => {
    const inspection = await inspectContracts(fixture("unresolved"));
    expect(inspection.findings).toEqual([]);
    expect(inspection.notes).toEqual([expect.stringContaining("modules/receipt/tasks.ts:5")]);
  });

  it("a broken contracts.toml is an error naming the reason", async () => {
    await expect(inspectContracts(fixture("broken-toml"))).rejects.toSatisfy(
      (e: unknown) => e instanceof ContractsFileError && e.code === "CONTRACTS_INVALID" && /not valid TOML/.test(e.message),
    );
    await expect(inspectContracts(fixture("broken-schema"))).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ContractsFileError &&
        e.message.includes("[modules.receipt]: unknown key publish") &&
        e.message.includes("[modules.receipt] depends_on: Invalid input: expected array"),
    );
  });

  it("the graph joins declarations and code; CONTRACTS.md is deterministic", async () => {
    const inspection = await inspectContracts(fixture("clean"));
    const ids = inspection.graph.edges.map((e) => `${e.id} ${e.declared ? "declared" : "code"}`).sort();
    expect(ids).toEqual([
      "depends:module:billing->module:invoice declared",
      // Both modules also publish through the outbox to a Kafka topic: the type goes there too.
      "produces:module:billing->topic:billing/billing.invoice_paid code",
      "produces:module:receipt->topic:receipts/receipt.registered code",
      "publishes:module:billing->event:billing.invoice_paid declared",
      "publishes:module:receipt->event:receipt.registered declared",
      "subscribes:event:billing.invoice_paid->module:alert code",
      "subscribes:event:receipt.registered->module:alert code",
    ]);
    expect(inspection.graph.nodes.map((n) => n.id).sort()).toEqual([
      "event:billing.invoice_paid",
      "event:receipt.registered",
      "module:alert",
      "module:billing",
      "module:invoice",
      "module:receipt",
      "topic:billing/billing.invoice_paid",
      "topic:receipts/receipt.registered",
    ]);
    const again = await inspectContracts(fixture("clean"));
    expect(renderContractsMarkdown(again)).toBe(renderContractsMarkdown(inspection));
    expect(renderContractsMarkdown(inspection)).toContain("| `receipt.registered` | receipt | `receipt.registered->alert.checkBudget` |");
  });
});
