import { TRPCError } from "@trpc/server";
import { z } from "zod";

/**
 * The largest offset a cursor may carry. Offsets walk the newest-first dead letters; no scan reads past a few
 * budgets, and a bigger number (9223372036854775807) once reached PostgreSQL as an out-of-range OFFSET, whose
 * error text came back in a 500.
 */
export const MAX_CURSOR_OFFSET = 1_000_000_000;

const OFFSET = /^(0|[1-9]\d{0,9})$/;

export const CURSOR_HINT = "pass back the nextCursor of the previous page unchanged (jfast docs admin-api#cursors)";

/** An offset cursor as the views hand it out: a decimal of at most MAX_CURSOR_OFFSET. */
export const offsetCursorSchema = z
  .string()
  .max(12)
  .refine((value) => parseOffset(value) !== null, { message: `not a cursor of this view: ${CURSOR_HINT}` });

/** The offset in a cursor's text, or null when it is not one. */
export function parseOffset(text: string): number | null {
  if (!OFFSET.test(text)) return null;
  const value = Number(text);
  return value <= MAX_CURSOR_OFFSET ? value : null;
}

export function badCursor(view: string): TRPCError {
  return new TRPCError({ code: "BAD_REQUEST", message: `not a cursor of ${view}: ${CURSOR_HINT}` });
}
