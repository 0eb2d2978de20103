import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/load-config.js";

function refusal(queue: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const data = { service: { name: "billing" }, plugins: { enabled: ["database", "queue"] }, plugin: { queue }, ...extra };
  try {
    resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env: {} });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("[plugin.queue] by backend", () => {
  it("refuses another backend's key at any value, naming the backend it belongs to", () => {
    expect(refusal({ backend: "memory", wait_timeout: 2 })).toContain(
      '[plugin.queue] wait_timeout applies to the Redis queue only, not backend = "memory" — remove wait_timeout, or set backend = "redis"',
    );
    expect(refusal({ cluster: false })).toContain('[plugin.queue] cluster applies to the Redis queue only, not backend = "postgres"');
    expect(refusal({ backend: "redis", url: "redis://a", durable_claims: false })).toContain("durable_claims applies to the PostgreSQL queue only");
  });

  it("lists it with the file's other problems: unknown keys and wrong types", () => {
    const message = refusal({ backend: "redis", url: "redis://a", queue_type: "quorum", concurency: 2, max_attempts: "3" }, { http: { ready_detail: true } });
    expect(message).toContain('[plugin.queue] queue_type applies to the RabbitMQ queue only, not backend = "redis"');
    expect(message).toContain("[plugin.queue]: unknown key concurency");
    expect(message).toContain("[plugin.queue] max_attempts: Invalid input: expected number, received string");
    expect(message).toContain("[http]: unknown key ready_detail");
  });

  it("names the backends when `backend` is not one", () => {
    expect(refusal({ backend: "sqlite" })).toContain('[plugin.queue] backend: Invalid option: expected one of "postgres"|"redis"|"rabbitmq"|"memory"');
  });
});
