import path from "node:path";
import { formatFindings, mergeServiceGraphs, type ContractsInspection, type WorkspaceGraph } from "@jfast/runtime";
import { defineCommand, WORKSPACE_ROOT_FLAG } from "../command.js";
import { BROKEN_CONTRACTS, readContracts } from "../contracts-access.js";
import { requireWorkspaceServices, resolveWorkspaceRoot } from "./deploy.js";

export default defineCommand({
  name: "workspace contracts check",
  summary: "jfast contracts check for every service of the workspace, and the events between them",
  description: `
Runs jfast contracts check for every service of the workspace (the directories its package.json
"workspaces" name that hold a jfast.toml), then checks what crosses services over Kafka: a module that
handles a topic with on(topic, ...) and compares event.type with a type no service publishes to that topic
(orphan-kafka-event), or handles a topic no service publishes to at all (orphan-kafka-topic). A module
publishes to a topic with events.publish(topic, event) or outbox.publish(tx, topic, event).
Exit code 0 when clean, 1 when anything is found, 2 when a contracts.toml is broken.
--json prints { services: [{ service, dir, findings }], crossService: [{ rule, service, module, message, fix }],
graph } where graph holds every service's modules and the topics between them, as the dashboard draws it.`,
  flags: {
    json: { type: "boolean", description: "print the findings and the workspace's graph as JSON" },
    root: WORKSPACE_ROOT_FLAG,
  },
  examples: ["jfast workspace contracts check", "jfast workspace contracts check --json | jq '.crossService'"],
  docs: "jfast docs contracts#across-services",
  async run({ flags, io }) {
    const workspace = resolveWorkspaceRoot(flags.root, io.cwd);
    const services = await requireWorkspaceServices(workspace, "jfast docs contracts#across-services");
    const inspected: Array<{ service: string; dir: string; inspection: ContractsInspection }> = [];
    let broken = false;
    // One after the other: each runs the TypeScript parser over a service's modules.
    for (const service of [...services].sort((a, b) => a.dir.localeCompare(b.dir))) {
      const inspection = await readContracts(path.join(workspace, service.dir), io);
      if (inspection) inspected.push({ service: service.config.service.name, dir: service.dir, inspection });
      else broken = true;
    }
    if (broken) return BROKEN_CONTRACTS;
    const graph = mergeServiceGraphs(inspected.map(({ service, inspection }) => ({ service, graph: inspection.graph })));
    const crossService = crossServiceFindings(graph);
    if (flags.json) {
      const body = { services: inspected.map(({ service, dir, inspection }) => ({ service, dir, findings: inspection.findings })), crossService, graph };
      io.out(`${JSON.stringify(body, null, 2)}\n`);
    } else {
      const blocks = inspected.map(({ service, dir, inspection }) => `${service} (${dir})\n${indent(formatFindings(inspection))}`);
      const across = crossService.length
        ? crossService.map((f) => `${f.rule}  [${f.service}/${f.module}]\n  ${f.message}\n  fix: ${f.fix}`).join("\n\n")
        : `across services: ok, ${kafkaSummary(graph)}`;
      io.out(`${blocks.join("\n\n")}\n\n${across}\n`);
    }
    const findings = inspected.reduce((n, s) => n + s.inspection.findings.length, 0) + crossService.length;
    return findings === 0 ? 0 : 1;
  },
});

interface CrossServiceFinding {
  rule: string;
  service: string;
  module: string;
  message: string;
  fix: string;
}

function crossServiceFindings(graph: WorkspaceGraph): CrossServiceFinding[] {
  const out: CrossServiceFinding[] = [];
  for (const e of graph.edges) {
    if (e.kind !== "consumes") continue;
    const [service = "", module = ""] = e.to.slice(e.to.indexOf(":") + 1).split("/");
    for (const v of e.violations) out.push({ rule: v.code, service, module, message: v.message, fix: v.fix ?? "" });
  }
  return out;
}

function kafkaSummary(graph: WorkspaceGraph): string {
  const topics = graph.nodes.filter((n) => n.kind === "topic").length;
  const links = graph.edges.filter((e) => e.kind === "consumes").length;
  return `${topics} event type${topics === 1 ? "" : "s"} on Kafka topics, ${links} handler link${links === 1 ? "" : "s"} to a module`;
}

function indent(text: string): string {
  return text.split("\n").map((l) => (l ? `  ${l}` : l)).join("\n");
}
