import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { resolveConfig } from "../config/load-config.js";
import { generateCompose } from "./compose.js";
import type { DeployService } from "./deploy-service.js";
import { toYaml } from "./yaml.js";

function service(dir: string, data: Record<string, unknown>): DeployService {
  const config = resolveConfig({
    root: `/ws/${dir}`,
    file: `/ws/${dir}/jfast.toml`,
    data,
    env: { REDIS_URL: "redis://redis:6379", AMQP_URL: "amqp://rabbitmq" },
  });
  return { config, dir };
}

const billing = (extra: Record<string, unknown> = {}, plugins = ["database", "queue", "outbox", "kafka"]) =>
  service("apps/example", {
    service: { name: "billing", base_port: 8000 },
    plugins: { enabled: plugins },
    plugin: { queue: { backend: "postgres" }, ...extra },
  });

const shipping = service("apps/shipping", {
  service: { name: "shipping", base_port: 8100 },
  plugins: { enabled: ["queue", "kafka"] },
  plugin: { queue: { backend: "redis" } },
});

/** What docker compose would read: the YAML text, parsed back. */
async function composeOf(...services: DeployService[]) {
  const { document, warnings } = generateCompose({ services });
  const text = await toYaml(document, { header: "generated" });
  return { doc: parse(text) as { name: string; services: Record<string, any>; configs?: Record<string, { content: string }> }, text, warnings };
}

describe("jfast deploy compose", () => {
  it("runs Kafka at base + 2 in KRaft mode: one container, an internal and an advertised external listener", async () => {
    const { doc } = await composeOf(billing());
    const kafka = doc.services.kafka;
    expect(kafka.image).toBe("apache/kafka:4.1.1");
    expect(kafka.ports).toEqual(["8002:9094"]);
    expect(kafka.environment).toMatchObject({
      KAFKA_PROCESS_ROLES: "broker,controller",
      KAFKA_LISTENERS: "INTERNAL://:9092,EXTERNAL://:9094,CONTROLLER://:9093",
      KAFKA_ADVERTISED_LISTENERS: "INTERNAL://kafka:9092,EXTERNAL://localhost:8002",
      KAFKA_CONTROLLER_QUORUM_VOTERS: "1@kafka:9093",
      KAFKA_INTER_BROKER_LISTENER_NAME: "INTERNAL",
    });
    expect(kafka.environment.CLUSTER_ID).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Object.keys(doc.services).filter((name) => /kafka|zookeeper/.test(name))).toEqual(["kafka"]);
    // Containers bootstrap on the internal listener.
    expect(doc.services.billing.environment.KAFKA_BROKERS).toBe("kafka:9092");
  });

  it("moves the published and the advertised port together with host_port, and takes image and advertised_host", async () => {
    const { doc } = await composeOf(billing({ kafka: { host_port: 19092, advertised_host: "devbox.local", image: "bitnamilegacy/kafka:3.9" } }));
    const kafka = doc.services.kafka;
    expect(kafka.image).toBe("bitnamilegacy/kafka:3.9");
    expect(kafka.ports).toEqual(["19092:9094"]);
    // Bitnami images read KAFKA_CFG_*.
    expect(kafka.environment.KAFKA_CFG_ADVERTISED_LISTENERS).toBe("INTERNAL://kafka:9092,EXTERNAL://devbox.local:19092");
    expect(kafka.environment.KAFKA_KRAFT_CLUSTER_ID).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("puts a worker beside the service: same image, `jfast worker`, no ports, no HTTP probe, 30 s to stop", async () => {
    const { doc, text } = await composeOf(billing());
    const api = doc.services.billing;
    const worker = doc.services["billing-worker"];
    expect(worker.image).toBe(api.image);
    expect(worker.build).toEqual(api.build);
    expect(worker.build).toEqual({ context: ".", dockerfile: "docker/Dockerfile", args: { SERVICE_DIR: "apps/example" } });
    expect(worker.command).toEqual(["jfast", "worker"]);
    expect(worker.ports).toBeUndefined();
    expect(worker.healthcheck).toEqual({ disable: true });
    expect(worker.stop_grace_period).toBe("30s");
    expect(worker.environment.PORT).toBeUndefined();
    expect(api.command).toEqual(["jfast", "start"]);
    expect(api.ports).toEqual(["8000:8000"]);
    expect(api.healthcheck.test.join(" ")).toContain("http://127.0.0.1:8000/ready");
    // Strings are quoted, so "8000:8000" and "30s" cannot be read as numbers.
    expect(text).toContain('stop_grace_period: "30s"');
    expect(text).toContain('- "8000:8000"');
  });

  it("lets the postgres queue reuse the database's container and adds nothing for outbox or observability", async () => {
    const { doc } = await composeOf(billing());
    expect(Object.keys(doc.services).sort()).toEqual(["billing", "billing-worker", "kafka", "postgres"]);
    expect(doc.services.postgres.ports).toEqual(["8001:5432"]);
    expect(doc.services.billing.environment.DATABASE_URL).toBe("postgres://postgres:postgres@postgres:5432/billing");
    expect(doc.services.billing.depends_on).toEqual({ postgres: { condition: "service_healthy" }, kafka: { condition: "service_healthy" } });
    expect(doc.configs?.["postgres-databases"]?.content).toBe('CREATE DATABASE "billing";\n');
  });

  it("publishes RabbitMQ at base + 6 and its management UI with the rabbitmq backend", async () => {
    const rabbit = service("apps/example", {
      service: { name: "billing", base_port: 8000 },
      plugins: { enabled: ["queue"] },
      plugin: { queue: { backend: "rabbitmq" } },
    });
    const { doc } = await composeOf(rabbit);
    expect(doc.services.rabbitmq.ports).toEqual(["8006:5672", "8007:15672"]);
    expect(doc.services.rabbitmq.image).toMatch(/management/);
    expect(doc.services.billing.environment.AMQP_URL).toBe("amqp://guest:guest@rabbitmq:5672");
    expect(doc.services.kafka).toBeUndefined();
    expect(doc.services["billing-worker"].stop_grace_period).toBe("30s");
  });

  it("generates no worker for the memory queue, and says why", async () => {
    const memory = service("apps/example", {
      service: { name: "billing", base_port: 8000 },
      plugins: { enabled: ["queue"] },
      plugin: { queue: { backend: "memory" } },
    });
    const { doc, warnings } = await composeOf(memory);
    expect(Object.keys(doc.services)).toEqual(["billing"]);
    expect(warnings.join("\n")).toMatch(/memory queue/);
  });
});

describe("jfast workspace compose", () => {
  it("shares one set of infrastructure, with a database per service and a worker per service with a queue", async () => {
    const { doc, warnings } = await composeOf(billing(), shipping);
    expect(warnings).toEqual([]);
    expect(doc.name).toBe("workspace");
    expect(Object.keys(doc.services).sort()).toEqual(["billing", "billing-worker", "kafka", "postgres", "redis", "shipping", "shipping-worker"]);
    expect(doc.services.redis.ports).toEqual(["8003:6379"]);
    expect(doc.services.shipping.environment).toMatchObject({ REDIS_URL: "redis://redis:6379/1", KAFKA_BROKERS: "kafka:9092", PORT: "8100" });
    expect(doc.services.shipping.depends_on).toEqual({ redis: { condition: "service_healthy" }, kafka: { condition: "service_healthy" } });
    expect(doc.services["shipping-worker"]).toMatchObject({ command: ["jfast", "worker"], stop_grace_period: "30s" });
    expect(doc.services["shipping-worker"].build.args).toEqual({ SERVICE_DIR: "apps/shipping" });
    // One broker; each service's own default bootstrap port reaches it, and all are told the one advertised address.
    expect(doc.services.kafka.ports).toEqual(["8002:9094", "8102:9094"]);
    expect(doc.services.kafka.environment.KAFKA_ADVERTISED_LISTENERS).toBe("INTERNAL://kafka:9092,EXTERNAL://localhost:8002");
  });

  it("warns when two services share a base port, and refuses two services of one name", async () => {
    const neighbour = service("apps/neighbour", { service: { name: "neighbour", base_port: 8000 }, plugins: { enabled: [] } });
    const { warnings } = await composeOf(billing(), neighbour);
    expect(warnings.join("\n")).toMatch(/neighbour and billing both use base_port 8000/);
    const twin = service("apps/twin", { service: { name: "billing", base_port: 8200 }, plugins: { enabled: [] } });
    expect(() => generateCompose({ services: [billing(), twin] })).toThrow(/2 services of the workspace are named "billing"/);
  });
});
