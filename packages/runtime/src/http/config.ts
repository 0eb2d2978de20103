import { z } from "zod";

/** `[http]`: jfast's own HTTP routes (docs/embedding.md#http-routes). */
export const httpSchema = z.strictObject({
  /** GET /ready with depths and error text in production too (always there elsewhere). */
  ready_details: z.boolean().default(false),
});

export interface HttpConfig {
  /** GET /ready shows counts and error text: outside production, or with `[http] ready_details`. */
  readyDetails: boolean;
}

export function resolveHttp(section: z.output<typeof httpSchema> | undefined, at: { production: boolean }): HttpConfig {
  return { readyDetails: !at.production || section?.ready_details === true };
}
