import { describe, expect, it } from "vitest";
import { DashboardConfigError, resolveConfig } from "../../lib/config.mjs";
import { makeNonce, securityHeaders } from "../../lib/security-headers.mjs";

const scriptSrc = (headers: Record<string, string>) => /script-src ([^;]*)/.exec(headers["Content-Security-Policy"]!)?.[1];

describe("the security headers", () => {
  it("never allow inline scripts by 'unsafe-inline': a page's run by its nonce, other answers' not at all", () => {
    expect(scriptSrc(securityHeaders())).toBe("'self'");
    const nonce = makeNonce();
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(makeNonce()).not.toBe(nonce);
    expect(scriptSrc(securityHeaders({ nonce }))).toBe(`'self' 'nonce-${nonce}'`);
    expect(scriptSrc(securityHeaders({ nonce, development: true }))).toBe(`'self' 'nonce-${nonce}' 'unsafe-eval'`);
    expect(securityHeaders({ nonce })["Content-Security-Policy"]).toContain("frame-ancestors 'none'");
  });

  it("createDashboardHandler's options are the config file's object", () => {
    const config = resolveConfig({ env: { NODE_ENV: "production" }, file: { services: [{ name: "billing", url: "http://127.0.0.1:8000/", token: "t" }], secret: "x".repeat(32) } });
    expect(config.services).toEqual([{ name: "billing", url: "http://127.0.0.1:8000", token: "t" }]);
    expect(() => resolveConfig({ env: { NODE_ENV: "production" }, file: { secret: "short" } })).toThrow(DashboardConfigError);
  });
});
