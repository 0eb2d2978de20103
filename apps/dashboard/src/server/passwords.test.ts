import { describe, expect, it } from "vitest";
import { hashPassword, isPasswordHash, verifyPassword } from "../../lib/passwords.mjs";
import { DashboardConfigError, resolveConfig } from "../../lib/config.mjs";

describe("password hashes and the configuration", () => {
  it("hashes with scrypt and a random salt; only the right password matches", { timeout: 60_000 }, async () => {
    const hash = await hashPassword("a long passphrase");
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(isPasswordHash(hash)).toBe(true);
    expect(await hashPassword("a long passphrase")).not.toBe(hash);
    expect(await verifyPassword("a long passphrase", hash)).toBe(true);
    expect(await verifyPassword("a long passphrasE", hash)).toBe(false);
    expect(await verifyPassword("a long passphrase", "plain text")).toBe(false);
  });

  it("refuses to start without a secret outside development, and takes the shared password as the user admin", () => {
    const env = { NODE_ENV: "production" as const, JFAST_DASHBOARD_SERVICES: "[]" };
    expect(() => resolveConfig({ env })).toThrow(DashboardConfigError);
    expect(() => resolveConfig({ env })).toThrow(/JFAST_DASHBOARD_SECRET=\$\(openssl rand -hex 32\)/);
    expect(() => resolveConfig({ env: { ...env, JFAST_DASHBOARD_SECRET: "short" } })).toThrow(/at least 32/);
    expect(resolveConfig({ env: { NODE_ENV: "development" as const } }).secretGenerated).toBe(true);
    const config = resolveConfig({ env: { ...env, JFAST_DASHBOARD_SECRET: "x".repeat(32), JFAST_DASHBOARD_PASSWORD: "pw", PORT: "4000", HOST: "127.0.0.1" }, flags: { port: "4100" } });
    expect(config.users).toEqual([{ name: "admin", role: "admin", passwordHash: null, password: "pw" }]);
    expect(config.listen).toEqual({ host: "127.0.0.1", port: 4100 });
    expect(config.notices.join("\n")).toContain('one user named "admin"');
    expect(() => resolveConfig({ env: { ...env, JFAST_DASHBOARD_SECRET: "x".repeat(32), JFAST_DASHBOARD_USERS: '[{"name":"ann","role":"operator","passwordHash":"secret"}]' } })).toThrow(/hash-password/);
    expect(() => resolveConfig({ env: { ...env, JFAST_DASHBOARD_SECRET: "x".repeat(32), JFAST_DASHBOARD_PROXY_AUTH: "{}" } })).toThrow(/trusts nobody/);
  });
});
