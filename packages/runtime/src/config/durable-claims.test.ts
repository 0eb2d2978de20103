import { describe, expect, it } from "vitest";
import { resolveConfig } from "./load-config.js";

function resolve(queue: Record<string, unknown>) {
  const data = { service: { name: "billing" }, plugins: { enabled: ["database", "queue"] }, plugin: { queue } };
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env: {} });
}

describe("[plugin.queue] durable_claims", () => {
  it("is off by default and read when set", () => {
    expect(resolve({ backend: "postgres" }).queue?.durableClaims).toBe(false);
    expect(resolve({ backend: "postgres", durable_claims: true }).queue?.durableClaims).toBe(true);
  });

  it("stops start-up on another backend, naming the key", () => {
    expect(() => resolve({ backend: "redis", url: "redis://a", durable_claims: true })).toThrow(/\[plugin.queue\] durable_claims applies to the PostgreSQL queue only/);
  });
});
