import { createHash } from "node:crypto";

/**
 * The NOTIFY channel relays of one schema listen on. Services sharing a database but not a schema do not
 * wake each other. A plain lower-case identifier (LISTEN takes one, PGlite's UNLISTEN does not quote); an
 * over-long name keeps a readable prefix plus a hash.
 */
export function outboxChannel(schema: string): string {
  const readable = `jfast_outbox_${schema}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  if (readable.length <= 63) return readable;
  const hash = createHash("sha1").update(schema).digest("hex").slice(0, 12);
  return `${readable.slice(0, 50)}_${hash}`;
}
