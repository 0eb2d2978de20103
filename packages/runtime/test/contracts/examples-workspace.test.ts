import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { inspectContracts } from "../../src/contracts/inspect.js";
import { mergeServiceGraphs } from "../../src/contracts/workspace-graph.js";

const APPS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../apps");

describe("the example workspace's contracts, across services", () => {
  it("draws billing's invoice.paid to shipping and shipping's shipment.created back, with no violation", async () => {
    const [billing, shipping] = await Promise.all([inspectContracts(path.join(APPS, "example")), inspectContracts(path.join(APPS, "shipping"))]);
    const merged = mergeServiceGraphs([
      { service: "billing", graph: billing.graph },
      { service: "shipping", graph: shipping.graph },
    ]);
    const kafka = merged.edges.filter((e) => e.kind === "produces" || e.kind === "consumes").map((e) => `${e.from} -> ${e.to}`).sort();
    expect(kafka).toEqual([
      "module:billing/invoice -> topic:invoices/invoice.paid",
      // Receipts go to Kafka too (the outbox relays them); no service of the workspace handles them yet.
      "module:billing/receipt -> topic:receipts/receipt.registered",
      "module:shipping/shipment -> topic:shipments/shipment.created",
      "topic:invoices/invoice.paid -> module:shipping/shipment",
      "topic:shipments/shipment.created -> module:billing/invoice",
    ]);
    expect(merged.edges.flatMap((e) => e.violations)).toEqual([]);
  });
});
