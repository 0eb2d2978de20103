import { ContractRule, type ContractFinding, type ContractsFile, type ModuleFacts, type Site } from "./types.js";
import { closest } from "./closest.js";

/** A finding plus the graph edge it belongs to ("publishes:module:a->event:x"), or null for none. */
export interface CheckedFinding {
  finding: ContractFinding;
  edge: string | null;
}

export interface CheckResult {
  findings: CheckedFinding[];
  /** Things the checker could not verify (an event type computed at run time); never a failure. */
  notes: string[];
}

const RULE_ORDER: readonly ContractRule[] = Object.values(ContractRule);

/**
 * The pure checker: contracts.toml against what the module sources do. Each rule names the module whose
 * code or declaration must change and the change that fixes it.
 */
export function checkContracts(params: { contracts: ContractsFile; modules: readonly ModuleFacts[] }): CheckResult {
  const { contracts, modules } = params;
  const out: CheckedFinding[] = [];
  const moduleNames = new Set(modules.map((m) => m.name));
  const declared = (module: string) => contracts.modules[module];
  const publishersOf = new Map<string, string[]>();
  for (const [name, entry] of Object.entries(contracts.modules)) {
    for (const type of entry.publishes) publishersOf.set(type, [...(publishersOf.get(type) ?? []), name]);
  }
  const buildersOf = new Map<string, string[]>();
  for (const m of modules) {
    for (const e of m.events) {
      const list = buildersOf.get(e.type) ?? [];
      if (!list.includes(m.name)) buildersOf.set(e.type, [...list, m.name]);
    }
  }
  const owners = taskOwners(modules);
  const add = (finding: Omit<ContractFinding, "file" | "line">, site: Site | null, edge: string | null) =>
    out.push({ finding: { ...finding, file: site?.file ?? null, line: site?.line ?? null }, edge });

  for (const m of modules) {
    for (const s of m.subscriptions) {
      if (publishersOf.has(s.type)) continue;
      const builders = buildersOf.get(s.type) ?? [];
      const near = closest(s.type, [...publishersOf.keys()]);
      add(
        {
          rule: ContractRule.orphanSubscription,
          module: m.name,
          subject: s.type,
          message: `${s.task ?? `a subscriber in modules/${m.name}`} listens for "${s.type}", which no module declares in publishes`,
          fix:
            builders.length > 0
              ? `add "${s.type}" to publishes in [modules.${builders[0]}] of contracts.toml (modules/${builders[0]} builds it)`
              : near
                ? `did you mean "${near}"? fix the type in subscribe(...), or declare "${s.type}" in the publishes of the module that emits it`
                : `declare "${s.type}" in the publishes of the module that emits it, or remove the subscriber`,
        },
        s,
        `subscribes:event:${s.type}->module:${m.name}`,
      );
    }
  }

  for (const m of modules) {
    const publishes = declared(m.name)?.publishes ?? [];
    for (const [type, sites] of groupBy(m.events, (e) => e.type)) {
      if (publishes.includes(type)) continue;
      const others = (publishersOf.get(type) ?? []).filter((n) => n !== m.name);
      add(
        {
          rule: ContractRule.undeclaredEvent,
          module: m.name,
          subject: type,
          message: `modules/${m.name} builds "${type}" events (${where(sites)}) but does not declare them in publishes${others.length ? ` (declared by ${others.join(", ")})` : ""}`,
          fix: declared(m.name)
            ? `add "${type}" to publishes in [modules.${m.name}] of contracts.toml`
            : `add to contracts.toml: [modules.${m.name}] publishes = ["${type}"]`,
        },
        sites[0]!,
        `publishes:module:${m.name}->event:${type}`,
      );
    }
  }

  const canTellUnknownTasks = modules.every((m) => !m.unresolved.some((u) => u.kind === "task" || u.kind === "subscribe"));
  // Tasks of other services on the same queue ([services.<name>] tasks): known, and owned by no module here.
  const foreign = new Set(Object.values(contracts.services).flatMap((s) => s.tasks));
  for (const m of modules) {
    const dependsOn = declared(m.name)?.dependsOn ?? [];
    for (const [task, sites] of groupBy(m.jobs, (j) => j.task)) {
      if (foreign.has(task)) continue;
      const owner = ownerOfTask(task, owners, moduleNames);
      if (!owners.has(task) && canTellUnknownTasks) {
        add(
          {
            rule: ContractRule.unknownTask,
            module: m.name,
            subject: task,
            message: `modules/${m.name} enqueues "${task}" (${where(sites)}), which no module declares; the worker would dead-letter it as an unknown task`,
            fix: closestFix(task, [...owners.keys()]) ?? `declare task("${task}", ...) in the tasks file of the module that owns it, or fix the name`,
          },
          sites[0]!,
          null,
        );
      }
      if (owner === null || owner === m.name || dependsOn.includes(owner)) continue;
      add(
        {
          rule: ContractRule.undeclaredDependency,
          module: m.name,
          subject: task,
          message: `modules/${m.name} enqueues "${task}", a task of modules/${owner} (${where(sites)}), without depends_on = ["${owner}"]`,
          fix: `${eventInstead(m.name, owner, declared(m.name)?.publishes ?? [])}; or, if ${m.name} really commands ${owner}, add "${owner}" to depends_on in [modules.${m.name}]`,
        },
        sites[0]!,
        `depends:module:${m.name}->module:${owner}`,
      );
    }
  }

  if (contracts.exists) {
    const known = [...moduleNames].join(", ") || "(none)";
    for (const [name, entry] of Object.entries(contracts.modules)) {
      if (!moduleNames.has(name)) {
        add(
          {
            rule: ContractRule.unknownModule,
            module: name,
            subject: name,
            message: `contracts.toml declares [modules.${name}] but there is no modules/${name} directory`,
            fix: `${closestFix(name, [...moduleNames], "rename the table to") ?? "rename the table to an existing module"} (modules: ${known}), or remove it`,
          },
          null,
          null,
        );
      }
      for (const dependency of entry.dependsOn) {
        if (moduleNames.has(dependency)) continue;
        add(
          {
            rule: ContractRule.unknownModule,
            module: name,
            subject: dependency,
            message: `[modules.${name}] depends_on names "${dependency}", which has no modules/${dependency} directory`,
            fix: `${closestFix(dependency, [...moduleNames], "change it to") ?? "remove it"} (modules: ${known})`,
          },
          null,
          null,
        );
      }
    }
  }

  out.sort(
    (a, b) =>
      RULE_ORDER.indexOf(a.finding.rule) - RULE_ORDER.indexOf(b.finding.rule) ||
      compare(a.finding.module, b.finding.module) ||
      compare(a.finding.subject, b.finding.subject),
  );
  return { findings: out, notes: notes(params) };
}

/** Which module owns each task name: the module that declares it, else the module its name is prefixed with. */
export function taskOwners(modules: readonly ModuleFacts[]): Map<string, string> {
  const owners = new Map<string, string>();
  for (const m of modules) {
    for (const t of m.tasks) owners.set(t.name, m.name);
    for (const s of m.subscriptions) if (s.task) owners.set(s.task, m.name);
  }
  return owners;
}

/** The declaring module, else the module the name is prefixed with (the name is the wire contract), else null. */
export function ownerOfTask(task: string, owners: ReadonlyMap<string, string>, moduleNames: ReadonlySet<string>): string | null {
  const declared = owners.get(task);
  if (declared !== undefined) return declared;
  const prefix = task.includes("->") ? task.split("->")[1]!.split(".")[0]! : task.split(".")[0]!;
  return moduleNames.has(prefix) ? prefix : null;
}

function eventInstead(module: string, owner: string, publishes: readonly string[]): string {
  if (publishes.length > 0) {
    return `let modules/${owner} react to an event ${module} already publishes: subscribe("${publishes[0]}", ...) in modules/${owner}/tasks.ts, and stop enqueueing its task`;
  }
  return `publish an event instead: outbox.publish(session, "<topic>", new Event({ type: "${module}.<something_happened>" })) in ${module}, declare it in [modules.${module}] publishes, and subscribe to it in modules/${owner}/tasks.ts`;
}

function notes(params: { contracts: ContractsFile; modules: readonly ModuleFacts[] }): string[] {
  const out: string[] = [];
  if (!params.contracts.exists) out.push(`no contracts.toml at ${params.contracts.path}: every module is read as publishing nothing and depending on nothing`);
  for (const m of params.modules) {
    for (const u of m.unresolved) {
      out.push(`${u.file}:${u.line}: the ${u.kind === "event" ? "event type" : u.kind === "subscribe" ? "subscribed type" : u.kind === "topic" ? "Kafka topic" : "task name"} of \`${u.text}\` is not a literal; contracts cannot check it`);
    }
  }
  return out;
}

function where(sites: readonly Site[]): string {
  const first = `${sites[0]!.file}:${sites[0]!.line}`;
  return sites.length > 1 ? `${first} and ${sites.length - 1} more` : first;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function closestFix(value: string, candidates: readonly string[], verb = "did you mean"): string | null {
  const near = closest(value, candidates);
  if (!near) return null;
  return verb === "did you mean" ? `did you mean "${near}"?` : `${verb} "${near}"`;
}
