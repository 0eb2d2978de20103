import { describe, expect, it } from "vitest";
import { mergeServiceGraphs, type ServiceContractsGraph } from "./workspace-graph.js";

const module = (name: string) => ({ id: `module:${name}`, kind: "module" as const, label: name });
const topic = (t: string, type: string) => ({ id: `topic:${t}/${type}`, kind: "topic" as const, label: `${t}: ${type}` });
const edge = (kind: "produces" | "consumes" | "publishes" | "subscribes", from: string, to: string) => ({ id: `${kind}:${from}->${to}`, kind, from, to, violations: [] });

const billing: ServiceContractsGraph = {
  service: "billing",
  graph: {
    nodes: [module("invoice"), { id: "event:invoice.paid", kind: "event", label: "invoice.paid" }, topic("invoices", "invoice.paid"), topic("shipments", "shipment.created")],
    edges: [
      edge("publishes", "module:invoice", "event:invoice.paid"),
      edge("produces", "module:invoice", "topic:invoices/invoice.paid"),
      edge("consumes", "topic:shipments/shipment.created", "module:invoice"),
    ],
    violations: [],
  },
};

describe("mergeServiceGraphs", () => {
  it("keeps each service's modules and local events its own, and joins them through shared topic nodes", () => {
    const shipping: ServiceContractsGraph = {
      service: "shipping",
      graph: {
        nodes: [module("invoice"), module("shipment"), topic("invoices", "invoice.paid"), topic("shipments", "shipment.created")],
        edges: [edge("consumes", "topic:invoices/invoice.paid", "module:shipment"), edge("produces", "module:shipment", "topic:shipments/shipment.created")],
        violations: [],
      },
    };
    const merged = mergeServiceGraphs([billing, shipping]);
    expect(merged.nodes.map((n) => `${n.id} ${n.service}`).sort()).toEqual([
      "event:billing/invoice.paid billing",
      "module:billing/invoice billing",
      "module:shipping/invoice shipping",
      "module:shipping/shipment shipping",
      "topic:invoices/invoice.paid null",
      "topic:shipments/shipment.created null",
    ]);
    expect(merged.edges.filter((e) => e.kind === "produces" || e.kind === "consumes").map((e) => `${e.from} -> ${e.to}`).sort()).toEqual([
      "module:billing/invoice -> topic:invoices/invoice.paid",
      "module:shipping/shipment -> topic:shipments/shipment.created",
      "topic:invoices/invoice.paid -> module:shipping/shipment",
      "topic:shipments/shipment.created -> module:billing/invoice",
    ]);
    expect(merged.edges.flatMap((e) => e.violations)).toEqual([]);
  });

  it("marks a handled type nobody publishes on its topic, with the likely typo, and a topic nobody publishes to", () => {
    const shipping: ServiceContractsGraph = {
      service: "shipping",
      graph: {
        nodes: [module("shipment"), topic("invoices", "invoice.payed"), topic("refunds", "*")],
        edges: [edge("consumes", "topic:invoices/invoice.payed", "module:shipment"), edge("consumes", "topic:refunds/*", "module:shipment")],
        violations: [],
      },
    };
    const merged = mergeServiceGraphs([billing, shipping]);
    // (billing's handler of shipment.created is an orphan here too: this shipping does not publish it.)
    const bad = merged.edges.filter((e) => e.violations.length && e.services.includes("shipping")).map((e) => [e.from, e.violations[0]!.code, e.violations[0]!.fix]);
    expect(bad).toEqual([
      ["topic:invoices/invoice.payed", "orphan-kafka-event", `did you mean "invoice.paid"? It is what "invoices" carries`],
      ["topic:refunds/*", "orphan-kafka-topic", `publish to "refunds" from the service that owns those facts (events.publish or outbox.publish), or check the topic's name`],
    ]);
    expect(bad.length).toBe(2);
  });

  it("joins a handler of every type on a topic to each type published there", () => {
    const audit: ServiceContractsGraph = {
      service: "audit",
      graph: { nodes: [module("trail"), topic("invoices", "*")], edges: [edge("consumes", "topic:invoices/*", "module:trail")], violations: [] },
    };
    const merged = mergeServiceGraphs([billing, audit]);
    expect(merged.nodes.some((n) => n.id === "topic:invoices/*")).toBe(false);
    expect(merged.edges.filter((e) => e.kind === "consumes" && e.to === "module:audit/trail").map((e) => [e.from, e.labels])).toEqual([["topic:invoices/invoice.paid", ["any event"]]]);
  });
});
