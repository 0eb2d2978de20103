import type { JfastConfig } from "../config/load-config.js";
import { ConfigError } from "../errors/jfast-error.js";
import { InternalPort } from "./ports.js";

/** One service as the generators see it: its resolved jfast.toml and where its code lives. */
export interface DeployService {
  config: JfastConfig;
  /** The service directory relative to the build context (the workspace root), e.g. "apps/example". */
  dir: string;
}

/** What the generators return: the documents, and what a human should look at before deploying. */
export interface Generated<T> {
  document: T;
  warnings: string[];
}

export function hasQueue(service: DeployService): boolean {
  return service.config.queue !== null && service.config.queue.backend !== "memory";
}

export function workerName(service: DeployService): string {
  return `${service.config.service.name}-worker`;
}

/**
 * The environment of a service's containers inside the compose network: URLs point at the infrastructure
 * containers by name. Each service gets its own database and its own Redis database number, so services of
 * one workspace never share a queue.
 */
export function composeEnvironment(service: DeployService, index: number, options: { http: boolean }): Record<string, string> {
  const { config } = service;
  const env: Record<string, string> = { JFAST_ENV: "production" };
  if (options.http) env.PORT = String(config.service.basePort);
  if (config.database) env.DATABASE_URL = `postgres://postgres:postgres@postgres:${InternalPort.postgres}/${databaseName(service)}`;
  if (config.queue?.backend === "redis") env.REDIS_URL = `redis://redis:${InternalPort.redis}/${index % 16}`;
  if (config.queue?.backend === "rabbitmq") env.AMQP_URL = `amqp://guest:guest@rabbitmq:${InternalPort.rabbitmq}`;
  if (config.kafka) env.KAFKA_BROKERS = `kafka:${InternalPort.kafkaInternal}`;
  return env;
}

/** Service names are `[a-z][a-z0-9_-]*`; PostgreSQL database names are safest without dashes. */
export function databaseName(service: DeployService): string {
  return service.config.service.name.replace(/-/g, "_");
}

/** Problems two services of one workspace would cause each other; two services of one name are an error. */
export function workspaceWarnings(services: readonly DeployService[]): string[] {
  const warnings: string[] = [];
  const names = new Map<string, number>();
  const ports = new Map<number, string>();
  const queues = new Map<string, string>();
  for (const service of services) {
    const { name, basePort } = service.config.service;
    names.set(name, (names.get(name) ?? 0) + 1);
    const taken = ports.get(basePort);
    if (taken && taken !== name) {
      warnings.push(`${name} and ${taken} both use base_port ${basePort}: give each service its own (e.g. 100 apart)`);
    }
    ports.set(basePort, name);
    if (service.config.queue?.backend === "rabbitmq") {
      const other = queues.get(service.config.queue.name);
      if (other) {
        warnings.push(
          `${name} and ${other} share the RabbitMQ broker with the same [plugin.queue] name "${service.config.queue.name}": they would take each other's jobs; give each its own name`,
        );
      }
      queues.set(service.config.queue.name, name);
    }
  }
  for (const [name, count] of names) {
    // Containers and Deployments are named after services: a second one would silently replace the first.
    if (count > 1) {
      throw new ConfigError(`${count} services of the workspace are named "${name}"`, {
        code: "DEPLOY_DUPLICATE_SERVICE",
        hint: "give each service its own [service] name in its jfast.toml",
        docs: "jfast docs deploy#workspaces",
      });
    }
  }
  return warnings;
}
