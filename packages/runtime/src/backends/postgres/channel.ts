import { createHash } from "node:crypto";

/**
 * The NOTIFY channel of one queue in one schema. Two services sharing a database but not a schema must
 * not wake each other, so both names are in it. Channels are plain lower-case identifiers (LISTEN takes
 * an identifier, and PGlite's UNLISTEN does not quote); an over-long name keeps a readable prefix plus a
 * hash. Two queues that fold to the same channel only cost each other a spurious wake-up.
 */
export function notificationChannel(schema: string, queue: string): string {
  const readable = `jfast_${schema}_${queue}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  if (readable.length <= 63) return readable;
  const hash = createHash("sha1").update(`${schema}\0${queue}`).digest("hex").slice(0, 12);
  return `${readable.slice(0, 50)}_${hash}`;
}
