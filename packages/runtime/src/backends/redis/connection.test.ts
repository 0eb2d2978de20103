import { describe, expect, it } from "vitest";
import { parseRedisUrl } from "./connection.js";
import { redactUrl } from "./errors.js";

describe("parseRedisUrl", () => {
  it("reads one node with credentials and database", () => {
    expect(parseRedisUrl("redis://app:s3cret@cache:6380/2")).toEqual({ nodes: [{ host: "cache", port: 6380 }], options: { username: "app", password: "s3cret", db: 2 } });
  });

  it("reads comma-separated seed nodes, full URLs or host:port after the first, credentials and TLS applying to all", () => {
    expect(parseRedisUrl("rediss://:pw@h1:7001, h2:7002,rediss://h3")).toEqual({
      nodes: [
        { host: "h1", port: 7001 },
        { host: "h2", port: 7002 },
        { host: "h3", port: 6379 },
      ],
      options: { password: "pw", tls: {} },
    });
  });

  it("keeps passwords out of a redacted seed list", () => {
    expect(redactUrl("redis://:pw@h1:7001,redis://h2:7002")).toBe("redis://:***@h1:7001,redis://h2:7002");
  });
});
