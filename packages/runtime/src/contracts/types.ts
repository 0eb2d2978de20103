/**
 * The vocabulary of contracts. A module *publishes* event types (facts) and *subscribes* to them; it *owns*
 * the tasks it declares; it *depends on* another module when it enqueues that module's task by name.
 * contracts.toml declares publishes and depends_on; the module sources say what actually happens.
 */

/** Where something was found, relative to the service root, 1-based line. */
export interface Site {
  file: string;
  line: number;
}

export const ContractRule = {
  /** A subscriber to an event type that no module declares in `publishes`. */
  orphanSubscription: "orphan-subscription",
  /** `new Event({ type })` in a module whose `publishes` does not list that type. */
  undeclaredEvent: "undeclared-event",
  /** A module enqueues another module's task by name without listing it in `depends_on`. */
  undeclaredDependency: "undeclared-dependency",
  /** contracts.toml names a module (a section or a `depends_on` entry) that has no directory under modules/. */
  unknownModule: "unknown-module",
  /** `new Job({ task })` for a task that no module declares: the worker would dead-letter it at once. */
  unknownTask: "unknown-task",
} as const;
export type ContractRule = (typeof ContractRule)[keyof typeof ContractRule];

/** One problem, as `jfast contracts check --json` prints it. */
export interface ContractFinding {
  rule: ContractRule;
  /** The module at fault (the one whose code or declaration must change). */
  module: string;
  /** What the finding is about: an event type, a task name or a module name. */
  subject: string;
  message: string;
  /** The change that makes the finding go away. */
  fix: string;
  /** The first place in the sources it was found, when it comes from code (null for a declaration). */
  file: string | null;
  line: number | null;
}

/** What one module's sources do, found by reading them (nothing is executed). */
export interface ModuleFacts {
  name: string;
  /** Source files read, relative to the root. */
  files: string[];
  /** `new Event({ type: "..." })`. */
  events: Array<Site & { type: string }>;
  /** `new Job({ task: "..." })`. */
  jobs: Array<Site & { task: string }>;
  /** `task("...", ...)` and the registry form `tasks.task("...", ...)`. */
  tasks: Array<Site & { name: string; session: boolean; schedule: string | null }>;
  /** `subscribe("...", ...)`, named as the runtime names it. */
  subscriptions: Array<Site & { type: string; task: string | null; session: boolean }>;
  /** `tasks.schedule("...", { cron | every })`. */
  schedules: Array<Site & { task: string; schedule: string; name: string | null }>;
  /** `on(topic, handler)`: Kafka handlers, with the event types their body tells apart (null: every type). */
  consumes: Array<Site & { topic: string; types: string[] | null }>;
  /** `events.publish(topic, event)` / `outbox.publish(tx, topic, event)`: `type` when the event is built in place. */
  produces: Array<Site & { topic: string; type: string | null }>;
  /** Calls whose event type, task name or topic is not a literal the reader can resolve: checked by nobody. */
  unresolved: Array<Site & { kind: "event" | "job" | "task" | "subscribe" | "topic"; text: string }>;
}

/** contracts.toml, parsed and validated. */
export interface ContractsFile {
  /** Absolute path; the file may not exist (then `exists` is false and `modules` is empty). */
  path: string;
  exists: boolean;
  modules: Record<string, { publishes: string[]; dependsOn: string[]; description: string | null }>;
  /** Other services whose tasks this one enqueues on a shared queue (`[services.<name>] tasks`). */
  services: Record<string, { tasks: string[]; description: string | null }>;
}

/** One module as `jfast contracts show` lists it. */
export interface ContractModule {
  name: string;
  description: string | null;
  /** True when the module has a directory under modules/ (false: only named in contracts.toml). */
  exists: boolean;
  /** Declared in contracts.toml. */
  publishes: string[];
  /** Event types its code builds (declared or not). */
  emits: string[];
  subscribes: Array<{ event: string; task: string | null; session: boolean }>;
  owns: Array<{ task: string; session: boolean; schedule: string | null }>;
  schedules: Array<{ task: string; schedule: string; name: string | null }>;
  /** Declared in contracts.toml. */
  dependsOn: string[];
  /** Other modules' tasks it enqueues by name. */
  enqueues: Array<{ task: string; owner: string | null }>;
  /** Kafka topics it handles with `on(topic, ...)`, and the event types its handler tells apart (null: all). */
  consumes: Array<{ topic: string; types: string[] | null }>;
  /**
   * Kafka topics it publishes to, with the event types that go there: the type built at the call, else every
   * type the module declares in `publishes` or builds.
   */
  produces: Array<{ topic: string; types: string[] }>;
}

/** A violation as drawn on the graph: the rule is its code. */
export interface GraphViolation {
  code: ContractRule;
  message: string;
  fix: string;
}

export interface GraphNode {
  /**
   * "module:<name>", "event:<type>" (a local event), or "topic:<topic>/<type>" (an event type on a Kafka topic,
   * "topic:<topic>/*" for a handler that takes every type): topic nodes are shared by the services of a workspace.
   */
  id: string;
  kind: "module" | "event" | "topic";
  label: string;
}

export interface GraphEdge {
  id: string;
  /**
   * publishes: module → event; subscribes: event → module; depends: module → module; produces: module → topic
   * (over Kafka); consumes: topic → module.
   */
  kind: "publishes" | "subscribes" | "depends" | "produces" | "consumes";
  from: string;
  to: string;
  /** What the edge comes from: a contracts.toml declaration, the code, or both. */
  declared: boolean;
  /** Subscriber task names (subscribes) or enqueued task names (depends), when the code shows them. */
  labels: string[];
  violations: GraphViolation[];
}

/**
 * What `contractsGraph(root)` returns and `jfast contracts show --json` prints: the modules, the graph the
 * dashboard draws (nodes, edges with their violations), and the violations that belong to no edge.
 */
export interface ContractsGraph {
  source: "contracts";
  modules: ContractModule[];
  nodes: GraphNode[];
  edges: GraphEdge[];
  violations: GraphViolation[];
}
