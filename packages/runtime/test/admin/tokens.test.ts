import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/observability/logger.js";
import { call } from "./admin-harness.js";

describe("admin tokens", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function root(toml: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-admin-tokens-"));
    await writeFile(path.join(dir, "jfast.toml"), toml);
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }

  it("reads role:token and name:role:token from [admin] tokens and JFAST_ADMIN_TOKENS", async () => {
    const dir = await root(`[service]\nname = "svc"\n[admin]\ntokens = ["viewer:from-the-file-0123456789abcdef"]\n`);
    const config = await loadConfig({ root: dir, env: { JFAST_ADMIN_TOKENS: "ops:operator:from-env-token-0123456789abcdef, viewer:another-viewer-0123456789abcdef" } });
    expect(config.admin.tokens.map((t) => [t.name, t.role, t.token])).toEqual([
      [expect.stringMatching(/^viewer-[0-9a-f]{8}$/), "viewer", "from-the-file-0123456789abcdef"],
      ["ops", "operator", "from-env-token-0123456789abcdef"],
      [expect.stringMatching(/^viewer-[0-9a-f]{8}$/), "viewer", "another-viewer-0123456789abcdef"],
    ]);
  });

  it("stops start-up on a malformed entry without echoing the secret", async () => {
    const dir = await root(`[service]\nname = "svc"\n`);
    const error = await loadConfig({ root: dir, env: { JFAST_ADMIN_TOKENS: "admin:supersecretvalue" } }).catch((e) => e);
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("role:token");
    expect(error.message).not.toContain("supersecretvalue");
  });

  it("refuses a token shorter than 24 characters, says how to make one, and never echoes it", async () => {
    const dir = await root(`[service]\nname = "svc"\n[admin]\ntokens = ["viewer:${"a".repeat(24)}"]\n`);
    expect((await loadConfig({ root: dir, env: {} })).admin.tokens).toHaveLength(1);
    for (const entry of ["viewer:eightchr", "ops:operator:twenty-three-characters"]) {
      const short = await loadConfig({ root: dir, env: { JFAST_ADMIN_TOKENS: entry } }).catch((e) => e);
      expect(short.code, entry).toBe("CONFIG_INVALID");
      expect(short.message).toMatch(/admin token #2 .* has \d+ characters; an admin token needs at least 24/);
      expect(short.hint).toContain("openssl rand -hex 24");
      expect(short.message).not.toContain(entry.split(":").at(-1));
    }
  });

  it("with no tokens configured every call is refused and the answer says how to configure one", async () => {
    const dir = await root(`[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    const jfast: Jfast = await createJfast({ root: dir, env: {}, logger: createLogger({ service: "svc", level: "silent" }) });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const answer = await call(jfast, "overview.get", { token: "anything-at-all" });
    expect(answer.status).toBe(401);
    expect(answer.error?.message).toContain("JFAST_ADMIN_TOKENS");
  });
});
