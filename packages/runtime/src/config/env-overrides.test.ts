import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors/jfast-error.js";
import { resolveConfig } from "./load-config.js";

const data = {
  service: { name: "billing" },
  plugins: { enabled: ["database", "queue", "outbox", "kafka"] },
  plugin: { kafka: { bootstrap_servers: "127.0.0.1:9092" }, queue: { backend: "postgres", name: "billing.jobs" } },
};

function resolve(env: NodeJS.ProcessEnv) {
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env });
}

describe("JFAST_DISABLE_PLUGINS", () => {
  it("turns enabled plugins off in this process and ignores their sections", () => {
    const config = resolve({ JFAST_DISABLE_PLUGINS: "kafka" });
    expect(config.kafka).toBeNull();
    expect([...config.plugins]).toEqual(["database", "queue", "outbox"]);
    expect([...config.disabledPlugins]).toEqual(["kafka"]);
  });

  it("lists only plugins jfast.toml enabled as turned off, and accepts spaces", () => {
    const config = resolve({ JFAST_DISABLE_PLUGINS: " telemetry , kafka " });
    expect([...config.disabledPlugins]).toEqual(["kafka"]);
  });

  it("is empty by default", () => {
    const config = resolve({});
    expect(config.kafka).not.toBeNull();
    expect(config.disabledPlugins.size).toBe(0);
  });

  it("refuses a name that is not a plugin, listing the known ones", () => {
    let error: unknown;
    try {
      resolve({ JFAST_DISABLE_PLUGINS: "broker" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "CONFIG_INVALID" });
    expect((error as Error).message).toContain('"broker"');
    expect((error as ConfigError).hint).toContain("kafka");
  });

  it("refuses the plugin's old name, naming the new one", () => {
    expect(() => resolve({ JFAST_DISABLE_PLUGINS: "telemetry,events" })).toThrow(
      expect.objectContaining({ code: "CONFIG_PLUGIN_RENAMED", message: expect.stringContaining('now called "kafka"'), hint: "write JFAST_DISABLE_PLUGINS=telemetry,kafka" }),
    );
  });

  it("still applies the rules between plugins: a postgres queue without its database is refused", () => {
    expect(() => resolve({ JFAST_DISABLE_PLUGINS: "database" })).toThrow(/needs the database plugin/);
  });
});

describe("JFAST_QUEUE_NAME", () => {
  it("overrides [plugin.queue] name", () => {
    expect(resolve({}).queue!.name).toBe("billing.jobs");
    expect(resolve({ JFAST_QUEUE_NAME: "billing.pr-42" }).queue!.name).toBe("billing.pr-42");
  });

  it("refuses a name the backends cannot use", () => {
    expect(() => resolve({ JFAST_QUEUE_NAME: "a{b}" })).toThrow(/JFAST_QUEUE_NAME="a\{b\}" is not a queue name/);
  });
});
