import {
  composeEnvironment,
  databaseName,
  hasQueue,
  workerName,
  workspaceWarnings,
  type DeployService,
  type Generated,
} from "./deploy-service.js";
import { kafkaContainer } from "./kafka-container.js";
import { InfraImage, InternalPort, PortOffset, WORKER_GRACE_SECONDS } from "./ports.js";

/**
 * `jfast deploy compose` (one service) and `jfast workspace compose` (several): a compose file in which each
 * enabled plugin brings its container and each service with a queue gets a worker beside it.
 *
 * - database → postgres (base + 1); the postgres queue backend reuses it.
 * - queue backend redis → redis (base + 3); rabbitmq → rabbitmq (base + 6) and its management UI (base + 7).
 * - events → kafka (KRaft, one container, two listeners; host_port, default base + 2).
 * - every service: `<name>` runs the HTTP API (`jfast start`, probed on /ready);
 *   `<name>-worker` runs `jfast worker` from the same image, with no ports and no HTTP probe, and 30 s to
 *   finish its jobs on SIGTERM.
 * In a workspace the infrastructure is shared and published at the first service's ports.
 */
export interface ComposeParams {
  services: readonly DeployService[];
  /** The compose project name (default: the first service's name, or "workspace" for several). */
  project?: string;
  /** The build context relative to the compose file: the workspace root holding package.json (default "."). */
  context?: string;
  /** The service Dockerfile relative to the context (default "docker/Dockerfile"). */
  dockerfile?: string;
}

export type ComposeDocument = {
  name: string;
  services: Record<string, Record<string, unknown>>;
  volumes?: Record<string, Record<string, never>>;
  configs?: Record<string, { content: string }>;
};

export function generateCompose(params: ComposeParams): Generated<ComposeDocument> {
  const { services } = params;
  if (services.length === 0) throw new TypeError("generateCompose needs at least one service");
  const primary = services[0]!.config;
  const base = primary.service.basePort;
  const warnings = workspaceWarnings(services);
  const containers: Record<string, Record<string, unknown>> = {};
  const dependencies: string[] = [];
  const doc: ComposeDocument = {
    name: params.project ?? (services.length === 1 ? primary.service.name : "workspace"),
    services: containers,
  };

  if (services.some((s) => s.config.database)) {
    const databases = services.filter((s) => s.config.database).map(databaseName);
    containers.postgres = {
      image: InfraImage.postgres,
      environment: { POSTGRES_USER: "postgres", POSTGRES_PASSWORD: "postgres" },
      ports: [`${base + PortOffset.postgres}:${InternalPort.postgres}`],
      volumes: ["postgres-data:/var/lib/postgresql/data"],
      // One database per service, created on the first start of the volume.
      configs: [{ source: "postgres-databases", target: "/docker-entrypoint-initdb.d/10-databases.sql" }],
      healthcheck: { test: ["CMD-SHELL", "pg_isready -U postgres"], interval: "2s", timeout: "5s", retries: 30 },
    };
    doc.volumes = { "postgres-data": {} };
    doc.configs = { "postgres-databases": { content: databases.map((d) => `CREATE DATABASE "${d}";\n`).join("") } };
    dependencies.push("postgres");
  }
  if (services.some((s) => s.config.queue?.backend === "redis")) {
    containers.redis = {
      image: InfraImage.redis,
      ports: [`${base + PortOffset.redis}:${InternalPort.redis}`],
      healthcheck: { test: ["CMD", "redis-cli", "ping"], interval: "2s", timeout: "5s", retries: 30 },
    };
    dependencies.push("redis");
  }
  if (services.some((s) => s.config.queue?.backend === "rabbitmq")) {
    containers.rabbitmq = {
      image: InfraImage.rabbitmq,
      ports: [
        `${base + PortOffset.rabbitmq}:${InternalPort.rabbitmq}`,
        `${base + PortOffset.rabbitmqManagement}:${InternalPort.rabbitmqManagement}`,
      ],
      healthcheck: { test: ["CMD", "rabbitmq-diagnostics", "-q", "ping"], interval: "5s", timeout: "10s", retries: 30 },
    };
    dependencies.push("rabbitmq");
  }
  const withEvents = services.filter((s) => s.config.kafka);
  if (withEvents.length > 0) {
    const first = withEvents[0]!.config.kafka!;
    const others = withEvents.slice(1).map((s) => s.config.kafka!);
    for (const other of others) {
      if (other.image !== first.image || other.advertisedHost !== first.advertisedHost) {
        warnings.push(`the workspace runs one Kafka container with ${withEvents[0]!.config.service.name}'s image and advertised_host; other services' settings are ignored`);
        break;
      }
    }
    // Every service's own host_port reaches the same external listener, so each jfast.toml's default
    // bootstrap address works; all of them are then told the one advertised address.
    containers.kafka = kafkaContainer({ kafka: first, extraHostPorts: others.map((e) => e.hostPort) });
    dependencies.push("kafka");
  }

  services.forEach((service, index) => {
    const name = service.config.service.name;
    const build = {
      context: params.context ?? ".",
      dockerfile: params.dockerfile ?? "docker/Dockerfile",
      args: { SERVICE_DIR: service.dir },
    };
    const image = `jfast-${name}:local`;
    const dependsOn = Object.fromEntries(
      dependencies.filter((d) => needs(service, d)).map((d) => [d, { condition: "service_healthy" }]),
    );
    const port = service.config.service.basePort;
    containers[name] = {
      build,
      image,
      command: ["jfast", "start"],
      environment: composeEnvironment(service, index, { http: true }),
      ports: [`${port}:${port}`],
      ...(Object.keys(dependsOn).length ? { depends_on: dependsOn } : {}),
      healthcheck: {
        test: ["CMD", "node", "-e", `fetch("http://127.0.0.1:${port}/ready").then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))`],
        interval: "5s",
        timeout: "5s",
        retries: 12,
        start_period: "10s",
      },
      stop_grace_period: `${WORKER_GRACE_SECONDS}s`,
    };
    if (hasQueue(service)) {
      containers[workerName(service)] = {
        build,
        image,
        command: ["jfast", "worker"],
        environment: composeEnvironment(service, index, { http: false }),
        ...(Object.keys(dependsOn).length ? { depends_on: dependsOn } : {}),
        // A worker serves no HTTP: no ports, and no probe inherited from the image.
        healthcheck: { disable: true },
        stop_signal: "SIGTERM",
        stop_grace_period: `${WORKER_GRACE_SECONDS}s`,
      };
    } else if (service.config.queue?.backend === "memory") {
      warnings.push(`${name} uses the memory queue: jobs live in the API process, so no worker container is generated`);
    }
  });
  return { document: doc, warnings };
}

function needs(service: DeployService, container: string): boolean {
  const { config } = service;
  switch (container) {
    case "postgres":
      return config.database !== null;
    case "redis":
      return config.queue?.backend === "redis";
    case "rabbitmq":
      return config.queue?.backend === "rabbitmq";
    case "kafka":
      return config.kafka !== null;
    default:
      return false;
  }
}
