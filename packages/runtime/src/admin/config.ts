import { createHash } from "node:crypto";
import { z } from "zod";
import { ConfigError } from "../errors/jfast-error.js";

/** `[admin]`: the admin API under /jfast/admin (docs/admin-api.md). Tokens are better given by JFAST_ADMIN_TOKENS. */
export const adminSchema = z.strictObject({
  tokens: z.array(z.string()).default([]),
  redact: z.array(z.string().min(1)).default([]),
  redact_defaults: z.boolean().default(true),
  /** Largest request body the admin API reads; calls carry ids and filters, never files. */
  max_body_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** Scanning views (error groups, filtered previews, searches) one caller may call per 10 s (docs/admin-api.md#scan-limits). */
  scan_calls: z.number().int().min(1).max(10_000).default(10),
});

export interface AdminConfig {
  /** `dashboard` marks a jfast dashboard's token: it acts for the person named in x-jfast-actor (admin/tokens.ts). */
  tokens: { name: string; role: "viewer" | "operator" | "dashboard"; token: string }[];
  redact: string[];
  /** `[admin] redact_defaults`: also redact the usual secret-bearing names (admin/redact.ts). */
  redactDefaults: boolean;
  /** A request body past this is refused (413) without being read further. */
  maxBodyBytes: number;
  /** `[admin] scan_calls`: calls of the scanning views per caller per 10 s (admin/scan-limit.ts). */
  scanCalls: number;
}

/** Shorter tokens can be guessed or remembered; `openssl rand -hex 24` makes one of 48. */
const MIN_ADMIN_TOKEN_LENGTH = 24;

/**
 * Admin tokens are `role:token` or `name:role:token` entries, from `[admin] tokens` and from
 * JFAST_ADMIN_TOKENS (comma-separated), so secrets can stay out of jfast.toml.
 */
export function resolveAdmin(section: z.output<typeof adminSchema> | undefined, at: { file: string; env: NodeJS.ProcessEnv }): AdminConfig {
  const entries = [...(section?.tokens ?? []), ...(at.env.JFAST_ADMIN_TOKENS ?? "").split(",")].map((e) => e.trim()).filter(Boolean);
  const tokens = entries.map((entry, index) => {
    const parts = entry.split(":");
    const [name, role, token] = parts.length >= 3 ? [parts[0]!, parts[1]!, parts.slice(2).join(":")] : [null, parts[0]!, parts[1] ?? ""];
    const where = `admin token #${index + 1} (from [admin] tokens in ${at.file} or JFAST_ADMIN_TOKENS)`;
    if (role !== "viewer" && role !== "operator" && role !== "dashboard") {
      throw new ConfigError(`${where} is not "role:token"`, {
        code: "CONFIG_INVALID",
        hint: `write each entry as "viewer:<token>" or "operator:<token>" (optionally "<name>:operator:<token>"; a dashboard's token as "<name>:dashboard:<token>")`,
        docs: "jfast docs admin-api#tokens",
      });
    }
    if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
      throw new ConfigError(`${where} has ${token.length} characters; an admin token needs at least ${MIN_ADMIN_TOKEN_LENGTH}`, {
        code: "CONFIG_INVALID",
        hint: `generate one with \`openssl rand -hex 24\` (48 characters) and use it as "${role}:<token>"`,
        docs: "jfast docs admin-api#tokens",
      });
    }
    return { name: name ?? `${role}-${createHash("sha256").update(token).digest("hex").slice(0, 8)}`, role: role as "viewer" | "operator" | "dashboard", token };
  });
  return {
    tokens,
    redact: section?.redact ?? [],
    redactDefaults: section?.redact_defaults ?? true,
    scanCalls: section?.scan_calls ?? 10,
    maxBodyBytes: section?.max_body_bytes ?? 1024 * 1024,
  };
}
