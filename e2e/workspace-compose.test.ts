import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { jfast, REPO_ROOT } from "./support/processes.js";

// `jfast workspace compose` on this repository: the services are the directories the root package.json
// "workspaces" name that hold a jfast.toml, i.e. apps/example (billing) and apps/shipping. The file is read
// back as YAML; it is not started here (no Docker engine on the test machines).
interface ComposeService {
  image: string;
  command?: string[];
  build?: { context: string; dockerfile: string; args: { SERVICE_DIR: string } };
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { disable?: boolean; test?: string[] };
  stop_signal?: string;
  stop_grace_period?: string;
}

describe("jfast workspace compose on this repository", () => {
  it("covers billing and shipping, their workers, and the Kafka, Redis and PostgreSQL they need", async () => {
    const result = await jfast(["workspace", "compose", "--stdout"], { cwd: REPO_ROOT });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("from apps/example/jfast.toml, apps/shipping/jfast.toml");
    const doc = parse(result.stdout) as { services: Record<string, ComposeService>; configs: Record<string, { content: string }> };
    const { services } = doc;
    expect(Object.keys(services).sort()).toEqual(["billing", "billing-worker", "kafka", "postgres", "redis", "shipping", "shipping-worker"]);

    // billing: PostgreSQL (its own database) and Kafka; its worker runs the same image with `jfast worker`.
    expect(services.billing).toMatchObject({
      build: { context: ".", dockerfile: "docker/Dockerfile", args: { SERVICE_DIR: "apps/example" } },
      command: ["jfast", "start"],
      ports: ["8000:8000"],
      environment: { PORT: "8000", DATABASE_URL: "postgres://postgres:postgres@postgres:5432/billing", KAFKA_BROKERS: "kafka:9092" },
      depends_on: { postgres: { condition: "service_healthy" }, kafka: { condition: "service_healthy" } },
    });
    expect(services["billing-worker"]).toMatchObject({
      image: services.billing!.image,
      command: ["jfast", "worker"],
      environment: { DATABASE_URL: services.billing!.environment!.DATABASE_URL, KAFKA_BROKERS: "kafka:9092" },
      healthcheck: { disable: true },
      stop_signal: "SIGTERM",
      stop_grace_period: "30s",
    });
    expect(services["billing-worker"]!.ports).toBeUndefined();
    expect(doc.configs["postgres-databases"]!.content).toContain('CREATE DATABASE "billing"');

    // shipping: Redis (a database number of its own) and Kafka; no PostgreSQL.
    expect(services.shipping).toMatchObject({
      build: { args: { SERVICE_DIR: "apps/shipping" } },
      command: ["jfast", "start"],
      ports: ["8100:8100"],
      environment: { PORT: "8100", REDIS_URL: "redis://redis:6379/1", KAFKA_BROKERS: "kafka:9092" },
      depends_on: { redis: { condition: "service_healthy" }, kafka: { condition: "service_healthy" } },
    });
    expect(services.shipping!.environment!.DATABASE_URL).toBeUndefined();
    expect(services.shipping!.depends_on!.postgres).toBeUndefined();
    expect(services["shipping-worker"]).toMatchObject({
      image: services.shipping!.image,
      command: ["jfast", "worker"],
      environment: { REDIS_URL: "redis://redis:6379/1", KAFKA_BROKERS: "kafka:9092" },
      healthcheck: { disable: true },
      stop_grace_period: "30s",
    });
    expect(services.shipping!.image).not.toBe(services.billing!.image);

    // One broker for both, on 9092 from the host: the port docker/kafka/start.sh uses and both jfast.toml name.
    expect(services.kafka!.image).toBe("apache/kafka:4.1.1");
    expect(services.kafka!.ports).toEqual(["9092:9094"]);
    expect(services.kafka!.environment).toMatchObject({
      KAFKA_PROCESS_ROLES: "broker,controller",
      KAFKA_ADVERTISED_LISTENERS: "INTERNAL://kafka:9092,EXTERNAL://localhost:9092",
    });
    // Shared infrastructure at the lowest base port's offsets (billing's 8000).
    expect(services.postgres!.ports).toEqual(["8001:5432"]);
    expect(services.redis!.ports).toEqual(["8003:6379"]);
  });
});
