import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors/jfast-error.js";
import { DEFAULT_RETENTION } from "../core/retention.js";
import { resolveConfig } from "./load-config.js";

/** What every queue has unless its section or [plugin.queue] sets retention keys (retention.test.ts). */
const kept = { retention: DEFAULT_RETENTION, keepCompleted: true };

function resolve(extra: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const data = {
    service: { name: "billing" },
    plugins: { enabled: ["queue"] },
    plugin: { queue: { backend: "memory", concurrency: 6, max_attempts: 4, visibility_timeout: 30 } },
    ...extra,
  };
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env });
}

function refusal(extra: Record<string, unknown>): ConfigError {
  try {
    resolve(extra);
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error("the configuration was accepted");
}

describe("[queues.<name>]", () => {
  it("has the default queue alone, under [plugin.queue] name, when none is declared", () => {
    expect(resolve({}).queue!.queues).toEqual([
      { name: "default", backendName: "jfast.jobs", concurrency: 6, maxAttempts: 4, visibilityTimeoutMs: 30_000, paused: false, fairness: null, ...kept },
    ]);
  });

  it("takes [plugin.queue]'s values for keys a section leaves out, and names each backend <name>:<queue>", () => {
    const queues = resolve({ queues: { media: { concurrency: 2, visibility_timeout: 300 }, email: { paused: true, max_attempts: 9 } } }, { JFAST_QUEUE_NAME: "ns.jobs" }).queue!.queues;
    expect(queues.map((q) => q.name)).toEqual(["default", "media", "email"]);
    expect(queues[0]!.backendName).toBe("ns.jobs");
    expect(queues[1]).toEqual({ name: "media", backendName: "ns.jobs:media", concurrency: 2, maxAttempts: 4, visibilityTimeoutMs: 300_000, paused: false, fairness: null, ...kept });
    expect(queues[2]).toEqual({ name: "email", backendName: "ns.jobs:email", concurrency: 6, maxAttempts: 9, visibilityTimeoutMs: 30_000, paused: true, fairness: null, ...kept });
  });

  it("lets [queues.default] set the default queue's own values", () => {
    const [first] = resolve({ queues: { default: { concurrency: 12 } } }).queue!.queues;
    expect(first).toMatchObject({ name: "default", backendName: "jfast.jobs", concurrency: 12 });
  });

  it("refuses unknown keys, wrong values and names that are not queue names, naming the section", () => {
    const unknown = refusal({ queues: { media: { concurency: 2 } } });
    expect(unknown.code).toBe("CONFIG_INVALID");
    expect(unknown.message).toContain("[queues.media]: unknown key concurency");
    const range = refusal({ queues: { media: { concurrency: 0 } } });
    expect(range.message).toContain("[queues.media] concurrency");
    const name = refusal({ queues: { "Media.Big": { concurrency: 2 } } });
    expect(name.message).toContain("a queue name is lower-case letters");
  });

  it("refuses [queues] without the queue plugin", () => {
    const error = (() => {
      try {
        resolveConfig({ root: "/srv", file: "/srv/jfast.toml", data: { service: { name: "billing" }, queues: { media: {} } }, env: {} });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error("accepted");
    })();
    expect(error.code).toBe("CONFIG_PLUGIN_MISSING");
    expect(error.message).toContain("[queues.media]");
  });
});
