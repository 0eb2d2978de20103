import { createHash, timingSafeEqual } from "node:crypto";

/** What a bearer token may do: `viewer` reads, `operator` also retries and discards. */
export const AdminRole = {
  viewer: "viewer",
  operator: "operator",
} as const;
export type AdminRole = (typeof AdminRole)[keyof typeof AdminRole];

export interface AdminToken {
  /** Who the audit trail names: the configured name, else the role and a short fingerprint of the token. */
  name: string;
  role: AdminRole;
  token: string;
}

export interface AdminPrincipal {
  name: string;
  role: AdminRole;
}

/**
 * Finds the principal for an `Authorization: Bearer …` header. Every configured token is compared in constant
 * time (and all of them are compared) so the answer's timing does not reveal how much of a token was right.
 */
export function authenticate(header: string | null, tokens: readonly AdminToken[]): AdminPrincipal | null {
  if (!header) return null;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return null;
  const presented = digest(match[1]!.trim());
  let found: AdminPrincipal | null = null;
  for (const candidate of tokens) {
    if (timingSafeEqual(presented, digest(candidate.token)) && !found) found = { name: candidate.name, role: candidate.role };
  }
  return found;
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
