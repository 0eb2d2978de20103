import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../lib/config.mjs";
import { proxyPerson } from "./proxy-person";

const SECRET = "s".repeat(40);

function configWith(proxyAuth: Record<string, unknown>) {
  return resolveConfig({ env: { NODE_ENV: "production" }, file: { secret: SECRET, users: [{ name: "olga", role: "operator" }], proxyAuth } });
}

function who(config: ReturnType<typeof configWith>, headers: Record<string, string>) {
  return proxyPerson({ proxy: config.proxyAuth, users: config.users, headers: new Headers(headers), peer: "10.0.0.5", secretMatches: (a, b) => a === b });
}

describe("single sign-on through a proxy", () => {
  it("gives no role to names an object inherits: toString, constructor, __proto__ and the like are nobody", () => {
    // JSON.parse makes "__proto__" an own key: listed on purpose, it must not turn every other name into an admin.
    const config = configWith(JSON.parse('{"trustedProxies":["10.0.0.5"],"roles":{"ann@example.com":"admin","__proto__":"viewer"}}'));
    for (const name of ["toString", "constructor", "hasOwnProperty", "valueOf", "isPrototypeOf", "__defineGetter__", "propertyIsEnumerable"]) {
      expect(who(config, { "x-forwarded-user": name }), name).toBeNull();
      expect(who(config, { "x-forwarded-email": name }), name).toBeNull();
    }
    expect(who(config, { "x-forwarded-email": "ann@example.com" })).toEqual({ name: "ann@example.com", role: "admin" });
    // Listed as a name, "__proto__" is just that person.
    expect(who(config, { "x-forwarded-user": "__proto__" })).toEqual({ name: "__proto__", role: "viewer" });
    expect(who(config, { "x-forwarded-user": "olga" })).toEqual({ name: "olga", role: "operator" });
    expect(who(config, { "x-forwarded-user": "mallory" })).toBeNull();
  });

  it("believes the headers only from a trusted proxy or with the secret, and falls back to the default role", () => {
    const config = configWith({ secretHeader: "x-proxy-secret", secret: SECRET, defaultRole: "viewer" });
    expect(who(config, { "x-forwarded-user": "sam" })).toBeNull();
    expect(who(config, { "x-forwarded-user": "sam", "x-proxy-secret": "wrong" })).toBeNull();
    expect(who(config, { "x-forwarded-user": "sam", "x-proxy-secret": SECRET })).toEqual({ name: "sam", role: "viewer" });
    expect(who(config, { "x-forwarded-user": "toString", "x-proxy-secret": SECRET })).toEqual({ name: "toString", role: "viewer" });
  });
});
