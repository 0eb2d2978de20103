import type { DashboardRole, DashboardUser, ProxyAuthConfig } from "../../lib/config.mjs";

/**
 * oauth2-proxy style single sign-on: the proxy in front authenticates people and names them in a header. Believed
 * only from the configured proxy addresses (as the binary saw the connection) or with the shared secret header.
 * Roles are looked up in a Map: a name such as `toString`, `constructor` or `__proto__` is a name like any other,
 * never something an object inherits.
 */
export function proxyPerson(params: {
  proxy: ProxyAuthConfig | null;
  users: readonly DashboardUser[];
  headers: Headers;
  /** The TCP peer's address, when the binary told it. */
  peer: string | null;
  /** Compares the presented secret with the configured one in constant time. */
  secretMatches: (presented: string, secret: string) => boolean;
}): { name: string; role: DashboardRole } | null {
  const { proxy, users, headers } = params;
  if (!proxy) return null;
  const fromTrustedAddress = proxy.trustedProxies.length > 0 && params.peer !== null && proxy.trustedProxies.includes(params.peer);
  const withSecret = proxy.secretHeader !== null && proxy.secret !== null && params.secretMatches(headers.get(proxy.secretHeader) ?? "", proxy.secret);
  if (!fromTrustedAddress && !withSecret) return null;
  const user = headers.get(proxy.userHeader)?.trim();
  const email = headers.get(proxy.emailHeader)?.trim();
  const name = email || user;
  if (!name) return null;
  const listed = users.find((u) => u.name === name || u.name === user);
  const role = proxy.roles.get(name) ?? (user ? proxy.roles.get(user) : undefined) ?? listed?.role ?? proxy.defaultRole;
  return role ? { name, role } : null;
}
