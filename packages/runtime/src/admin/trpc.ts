import { initTRPC, TRPCError } from "@trpc/server";
import type { AdminPrincipal } from "./tokens.js";
import type { AdminSources } from "./sources.js";

/** What every admin procedure sees: who is calling (null when the token was missing or wrong) and the app. */
export interface AdminContext {
  principal: AdminPrincipal | null;
  sources: AdminSources;
  /** Set when no token is configured at all, so the refusal can say how to fix it. */
  tokensConfigured: boolean;
  /** What a 401 is logged with: no token, or an unknown one by its fingerprint. */
  presented: string;
}

const t = initTRPC.context<AdminContext>().create({
  errorFormatter({ shape, error }) {
    // Zod issues reach the caller as a readable reason (the HTTP status is already 400).
    const cause = error.cause as { issues?: { path: PropertyKey[]; message: string }[] } | undefined;
    const issues = error.code === "BAD_REQUEST" && cause?.issues ? cause.issues.map((i) => `${i.path.map(String).join(".") || "(input)"}: ${i.message}`) : null;
    const retryAfterSeconds = (error.cause as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    return {
      ...shape,
      message: issues ? `invalid input: ${issues.join("; ")}` : shape.message,
      data: { ...shape.data, stack: undefined, ...(typeof retryAfterSeconds === "number" ? { retryAfterSeconds } : {}) },
    };
  },
});

export const router = t.router;

/** Any valid token: viewers and operators. */
export const viewerProcedure = t.procedure.use(({ ctx, next, path }) => {
  if (!ctx.principal) {
    ctx.sources.logger.warn("admin call refused: 401", { path, token: ctx.presented });
    throw new TRPCError({
      code: "UNAUTHORIZED",
      message: ctx.tokensConfigured
        ? "a valid bearer token is required (Authorization: Bearer <token>)"
        : "the admin API has no tokens configured: set JFAST_ADMIN_TOKENS (e.g. \"viewer:<token>,operator:<token>\") or [admin] tokens in jfast.toml; see jfast docs admin-api",
    });
  }
  return next({ ctx: { ...ctx, principal: ctx.principal } });
});

/** Mutations: operator tokens only. */
export const operatorProcedure = viewerProcedure.use(({ ctx, next, path }) => {
  if (ctx.principal.role !== "operator") {
    ctx.sources.logger.warn("admin call refused: 403", { path, token: ctx.principal.via ?? ctx.principal.name, actor: ctx.principal.name, role: ctx.principal.role });
    throw new TRPCError({
      code: "FORBIDDEN",
      message: ctx.principal.via
        ? `${ctx.principal.name} has the ${ctx.principal.actorRole ?? "viewer"} role in the dashboard "${ctx.principal.via}"; retrying, discarding, pausing and resuming need an operator`
        : `the token "${ctx.principal.name}" has the ${ctx.principal.role} role; retrying, discarding, pausing and resuming need an operator token`,
    });
  }
  return next();
});
