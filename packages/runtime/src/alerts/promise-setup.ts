import type { ContractsGraph } from "../admin/sources.js";
import type { JfastConfig } from "../config/load-config.js";
import type { TaskRegistry } from "../core/registry.js";
import { closest } from "../contracts/closest.js";
import { ConfigError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { Outbox } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { parseDuration, type AlertRule } from "./config.js";
import { createPromiseChecker, eventTypes, notEnabled, publishes, type PromiseChecker } from "./promise.js";

const DOCS = "jfast docs alerts#promises";

/**
 * The promise checker of a service's evaluator (docs/alerts.md#promises), after checking its `[[alerts]]` promises:
 * they need the outbox (so the database: PostgreSQL or PGlite) and Kafka, the outbox must keep delivered rows for
 * `within` + `window`, and `when` must be an event type this service's contracts graph publishes. Null where the
 * service has no outbox: a promise made there at run time is reported as not evaluable.
 */
export async function promiseCheckerFor(params: {
  config: JfastConfig;
  registry: TaskRegistry;
  queue: QueueProvider;
  outbox: () => Outbox | null;
  logger: Logger;
  /** false (CLI tools): the contracts graph is not read to check the rules. */
  background: boolean;
}): Promise<PromiseChecker | null> {
  const { config, registry, logger } = params;
  const alerting = config.alerts!;
  const declared = alerting.rules.filter((r) => r.rule === "promise");
  const first = declared[0];
  if (first) refuseWithout(first, config, params.queue);
  if (promiseMissing(config).length > 0) return null;
  const graph = async () => {
    const { contractsSourceFor } = await import("../admin/contracts-source.js");
    return contractsSourceFor({ root: config.root, registry }).graph();
  };
  if (first && params.background) checkEvents(declared, config.service.name, alerting.services.length > 0, await graph().catch(() => null));
  const redaction = await import("../admin/redact.js").then(({ createRedaction }) => createRedaction({ fields: config.admin.redact, defaults: config.admin.redactDefaults }));
  const sources = {
    service: { name: config.service.name, environment: config.service.environment },
    plugins: [...config.plugins],
    queue: () => params.queue,
    outbox: params.outbox,
    redaction,
  };
  return createPromiseChecker({
    service: config.service.name,
    outbox: params.outbox,
    trace: async (requestId) => (await import("../admin/trace.js")).gatherTrace(sources, requestId, 200),
    graph: () => graph().catch(() => null),
    peers: alerting.services,
    timeoutMs: alerting.timeoutMs,
    logger,
  });
}

/** The plugins a promise needs that `config` does not enable: the database, the outbox (its `when` rows) and Kafka. */
export function promiseMissing(config: JfastConfig): Array<"database" | "outbox" | "kafka"> {
  return (["database", "outbox", "kafka"] as const).filter((p) => !config.plugins.has(p));
}

/** A promise reads the `when` events from the outbox's event rows: the outbox (in the database) and Kafka must be on. */
function refuseWithout(rule: AlertRule, config: JfastConfig, queue: QueueProvider): void {
  if (!config.plugins.has("database")) {
    throw new ConfigError(`[[alerts]] "${rule.name}" is a promise, which reads the ${rule.when} events from the outbox, and the ${queue.backend.kind} queue without the database plugin keeps no outbox`, {
      code: "NOT_SUPPORTED",
      hint: `enable "database" (PostgreSQL or PGlite), "outbox" and "kafka" in [plugins] of the service that publishes ${rule.when}, or remove the alert`,
      docs: DOCS,
    });
  }
  // The database is there (above): what may be missing is the outbox or Kafka.
  const missing = promiseMissing(config);
  if (missing.length > 0) {
    throw new ConfigError(`[[alerts]] "${rule.name}" is a promise, which follows ${rule.when} through the outbox to Kafka, and ${notEnabled(missing)}`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add ${missing.map((p) => `"${p}"`).join(" and ")} to [plugins] enabled in jfast.toml, or remove the alert`,
      docs: DOCS,
    });
  }
  const retentionMs = config.outbox?.retentionMs ?? 0;
  const reachMs = parseDuration(rule.within!)! + parseDuration(rule.window)!;
  if (retentionMs < reachMs) {
    throw new ConfigError(
      `[[alerts]] "${rule.name}" looks back ${Math.ceil(reachMs / 1000)}s (within + window) for its ${rule.when} events, and the outbox keeps delivered rows ${Math.round(retentionMs / 1000)}s`,
      { code: "CONFIG_INVALID", hint: `set [plugin.outbox] retention = ${Math.ceil(reachMs / 1000)} (seconds) or more, or shorten within or window`, docs: DOCS },
    );
  }
}

/**
 * Where this service's contracts graph tells (one from contracts.toml and the sources): `when` must be an event it
 * publishes, and with no other service listed, so must `then` — nobody else could keep the promise.
 */
function checkEvents(rules: readonly AlertRule[], service: string, others: boolean, graph: ContractsGraph | null): void {
  if (!graph || graph.source !== "contracts") return;
  const known = eventTypes(graph);
  if (known.size === 0) return;
  for (const rule of rules) {
    if (publishes(graph, rule.when!)) continue;
    const near = closest(rule.when!, [...known]);
    const what = known.has(rule.when!) ? `${service}'s modules do not publish "${rule.when}" (they only hear it)` : `no module of ${service} publishes "${rule.when}"`;
    throw new ConfigError(`[[alerts]] "${rule.name}": ${what}, by its contracts graph (jfast contracts show)`, {
      code: "CONFIG_INVALID",
      hint: near
        ? `did you mean when = "${near}"?`
        : `write the promise in the service that publishes ${rule.when}, or declare it in contracts.toml (publishes = ["${rule.when}"]) if a module publishes it in a way the checker cannot read`,
      docs: DOCS,
    });
  }
  if (others) return;
  for (const rule of rules) {
    if (publishes(graph, rule.then!)) continue;
    const near = closest(rule.then!, [...known]);
    throw new ConfigError(`[[alerts]] "${rule.name}": no module of ${service} publishes "${rule.then}", by its contracts graph, and no other service is listed to publish it`, {
      code: "CONFIG_INVALID",
      hint: near
        ? `did you mean then = "${near}"? Or list the service that publishes ${rule.then} in [[alerting.services]]`
        : `list the service that publishes ${rule.then} in [[alerting.services]] (or JFAST_ALERTING_SERVICES), as the dashboard lists it`,
      docs: DOCS,
    });
  }
}
