import { ownerOfTask, taskOwners, type CheckedFinding } from "./check.js";
import type { ContractModule, ContractsFile, ContractsGraph, GraphEdge, GraphNode, GraphViolation, ModuleFacts } from "./types.js";

/**
 * Modules and event types as nodes; publishes (module → event), subscribes (event → module) and depends
 * (module → module) as edges. An edge exists when contracts.toml declares it or the code does it; `declared`
 * tells which, and the checker's violations sit on the edge they are about.
 */
export function buildContractsGraph(params: {
  contracts: ContractsFile;
  modules: readonly ModuleFacts[];
  findings: readonly CheckedFinding[];
}): ContractsGraph {
  const { contracts, modules } = params;
  const byName = new Map(modules.map((m) => [m.name, m]));
  const names = [...new Set([...byName.keys(), ...Object.keys(contracts.modules)])].sort();
  const owners = taskOwners(modules);
  const owner = (task: string) => ownerOfTask(task, owners, new Set(byName.keys()));
  const moduleList: ContractModule[] = names.map((name) => describeModule(name, byName.get(name), contracts.modules[name], owner));

  const nodes = new Map<string, GraphNode>();
  const edges = new Map<string, GraphEdge>();
  const moduleNode = (name: string) => {
    const id = `module:${name}`;
    if (!nodes.has(id)) nodes.set(id, { id, kind: "module", label: name });
    return id;
  };
  const eventNode = (type: string) => {
    const id = `event:${type}`;
    if (!nodes.has(id)) nodes.set(id, { id, kind: "event", label: type });
    return id;
  };
  const edge = (kind: GraphEdge["kind"], from: string, to: string, declared: boolean, label?: string | null) => {
    const id = `${kind}:${from}->${to}`;
    const existing = edges.get(id) ?? { id, kind, from, to, declared: false, labels: [], violations: [] };
    existing.declared ||= declared;
    if (label && !existing.labels.includes(label)) existing.labels.push(label);
    edges.set(id, existing);
  };

  const topicNode = (topic: string, type: string | null) => {
    const id = `topic:${topic}/${type ?? "*"}`;
    if (!nodes.has(id)) nodes.set(id, { id, kind: "topic", label: `${topic}: ${type ?? "any event"}` });
    return id;
  };

  for (const m of moduleList) {
    const self = moduleNode(m.name);
    for (const p of m.produces) for (const type of p.types) edge("produces", self, topicNode(p.topic, type), false);
    for (const c of m.consumes) for (const type of c.types ?? [null]) edge("consumes", topicNode(c.topic, type), self, false);
    for (const type of m.publishes) edge("publishes", self, eventNode(type), true);
    for (const type of m.emits) edge("publishes", self, eventNode(type), false);
    for (const s of m.subscribes) edge("subscribes", eventNode(s.event), self, false, s.task);
    for (const dependency of m.dependsOn) edge("depends", self, moduleNode(dependency), true);
    for (const e of m.enqueues) if (e.owner) edge("depends", self, moduleNode(e.owner), false, e.task);
  }

  const violations: GraphViolation[] = [];
  for (const { finding, edge: edgeId } of params.findings) {
    const violation: GraphViolation = { code: finding.rule, message: finding.message, fix: finding.fix };
    const target = edgeId ? edges.get(edgeId) : undefined;
    if (target) target.violations.push(violation);
    else violations.push(violation);
  }
  return { source: "contracts", modules: moduleList, nodes: [...nodes.values()], edges: [...edges.values()], violations };
}

function describeModule(
  name: string,
  facts: ModuleFacts | undefined,
  declared: ContractsFile["modules"][string] | undefined,
  ownerOf: (task: string) => string | null,
): ContractModule {
  const unique = <T>(items: T[], key: (item: T) => string) => [...new Map(items.map((i) => [key(i), i])).values()];
  return {
    name,
    description: declared?.description ?? null,
    exists: facts !== undefined,
    publishes: [...(declared?.publishes ?? [])],
    emits: [...new Set(facts?.events.map((e) => e.type) ?? [])].sort(),
    subscribes: unique(
      (facts?.subscriptions ?? []).map((s) => ({ event: s.type, task: s.task, session: s.session })),
      (s) => `${s.event}|${s.task}`,
    ),
    owns: unique(
      (facts?.tasks ?? []).map((t) => ({ task: t.name, session: t.session, schedule: t.schedule })),
      (t) => t.task,
    ),
    schedules: (facts?.schedules ?? []).map((s) => ({ task: s.task, schedule: s.schedule, name: s.name })),
    dependsOn: [...(declared?.dependsOn ?? [])],
    consumes: unique((facts?.consumes ?? []).map((c) => ({ topic: c.topic, types: c.types })), (c) => `${c.topic}|${c.types?.join(",") ?? "*"}`),
    produces: producedTypes(facts, declared),
    enqueues: unique(
      (facts?.jobs ?? [])
        .map((j) => ({ task: j.task, owner: ownerOf(j.task) }))
        .filter((j) => j.owner !== name),
      (j) => j.task,
    ),
  };
}

/**
 * Per topic, the event types a module publishes there: the type built at the call, else (an event passed in a
 * variable) every type the module declares or builds, since any of them may be the one.
 */
function producedTypes(facts: ModuleFacts | undefined, declared: ContractsFile["modules"][string] | undefined): Array<{ topic: string; types: string[] }> {
  const own = [...new Set([...(declared?.publishes ?? []), ...(facts?.events.map((e) => e.type) ?? [])])];
  const byTopic = new Map<string, Set<string>>();
  for (const p of facts?.produces ?? []) {
    const types = byTopic.get(p.topic) ?? new Set<string>();
    for (const type of p.type !== null ? [p.type] : own) types.add(type);
    byTopic.set(p.topic, types);
  }
  return [...byTopic].map(([topic, types]) => ({ topic, types: [...types].sort() })).sort((a, b) => (a.topic < b.topic ? -1 : 1));
}
