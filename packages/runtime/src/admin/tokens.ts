import { createHash, timingSafeEqual } from "node:crypto";
import { actorNameProblem } from "./actor-name.js";

/** What a bearer token may do: `viewer` reads, `operator` also retries and discards. */
export const AdminRole = {
  viewer: "viewer",
  operator: "operator",
} as const;
export type AdminRole = (typeof AdminRole)[keyof typeof AdminRole];

/**
 * How a token is configured: a role, or `dashboard` — the token of a jfast dashboard, which acts for the person
 * it names in `x-jfast-actor` (docs/admin-api.md#dashboard-tokens).
 */
export const AdminTokenKind = { ...AdminRole, dashboard: "dashboard" } as const;
export type AdminTokenKind = (typeof AdminTokenKind)[keyof typeof AdminTokenKind];

/** A person's role in a dashboard; `admin` acts on a service as an operator (the dashboard keeps bulk actions to it). */
export const ActorRole = { viewer: "viewer", operator: "operator", admin: "admin" } as const;
export type ActorRole = (typeof ActorRole)[keyof typeof ActorRole];

/** The header a dashboard names the acting person in: `<role> <name, percent-encoded>`, e.g. `operator alice%40example.com`. */
export const ACTOR_HEADER = "x-jfast-actor";

export interface AdminToken {
  /** Who the audit trail names: the configured name, else the role and a short fingerprint of the token. */
  name: string;
  role: AdminTokenKind;
  token: string;
}

export interface AdminPrincipal {
  /** The token's name, or the person a dashboard's token acts for. */
  name: string;
  /** What the call may do on this service. */
  role: AdminRole;
  /** The name of the dashboard's token that forwarded the person; absent for a call made with the caller's own token. */
  via?: string;
  /** The person's role in that dashboard. */
  actorRole?: ActorRole;
}

/**
 * Finds the principal for an `Authorization: Bearer …` header. Every configured token is compared in constant
 * time (and all of them are compared) so the answer's timing does not reveal how much of a token was right.
 * `actor` (the x-jfast-actor header) counts only with a dashboard's token; other tokens act as themselves.
 */
export function authenticate(header: string | null, tokens: readonly AdminToken[], actor: string | null = null): AdminPrincipal | null {
  if (!header) return null;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return null;
  const presented = digest(match[1]!.trim());
  let found: AdminToken | null = null;
  for (const candidate of tokens) {
    if (timingSafeEqual(presented, digest(candidate.token)) && !found) found = candidate;
  }
  if (!found) return null;
  if (found.role !== AdminTokenKind.dashboard) return { name: found.name, role: found.role };
  const person = parseActor(actor);
  // A dashboard's own calls (its live poller, a page's first paint) name nobody: they read, nothing more.
  if (!person) return { name: found.name, role: AdminRole.viewer, via: found.name };
  return { name: person.name, role: person.role === ActorRole.viewer ? AdminRole.viewer : AdminRole.operator, via: found.name, actorRole: person.role };
}

/** `<role> <percent-encoded name>`; anything else names nobody. */
export function parseActor(value: string | null): { name: string; role: ActorRole } | null {
  const match = value ? /^(viewer|operator|admin) (\S{1,600})$/.exec(value.trim()) : null;
  if (!match) return null;
  let name: string;
  try {
    name = decodeURIComponent(match[2]!);
  } catch {
    return null;
  }
  if (actorNameProblem(name) !== null) return null;
  return { name, role: match[1] as ActorRole };
}

/** The header value a dashboard sends for a person. */
export function formatActor(person: { name: string; role: ActorRole }): string {
  return `${person.role} ${encodeURIComponent(person.name)}`;
}

/** How a refusal names what was presented: "none", or the fingerprint of an unknown token (never the token). */
export function presentedToken(header: string | null): string {
  const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  if (!header) return "none";
  return match ? `unknown (fingerprint ${tokenFingerprint(match[1]!.trim())})` : "not a bearer token";
}

/** A short, stable fingerprint that names a token in logs and audit rows without revealing it. */
export function tokenFingerprint(token: string): string {
  return digest(token).toString("hex").slice(0, 8);
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
