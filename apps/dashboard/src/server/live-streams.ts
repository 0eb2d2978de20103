import { randomBytes } from "node:crypto";

/** How often the server pings each open stream; the tab answers each ping (live.tsx). */
export const PING_MS = 15_000;
/**
 * A stream with no answer for this long is closed. A tab that vanished without closing its connection (a laptop
 * shut, a network gone, a client that stopped reading) would otherwise hold its listener and buffer pushes for it
 * until TCP gives up, minutes to hours later. Three pings missed: well within a minute.
 */
export const SILENCE_MS = 45_000;
const SWEEP_MS = 5_000;

interface OpenStream {
  lastAnswer: number;
  close: () => void;
}

interface Registry {
  streams: Map<string, OpenStream>;
  sweeper: ReturnType<typeof setInterval> | null;
}

// Kept on globalThis, as the hub is, so the development server's module reloads share one registry.
const registry: Registry = ((globalThis as { __jfastLiveStreams?: Registry }).__jfastLiveStreams ??= { streams: new Map(), sweeper: null });

/** Registers an open stream; `close` is called when it has been silent for SILENCE_MS. Returns its id. */
export function openStream(close: () => void, now = Date.now()): string {
  const id = randomBytes(16).toString("base64url");
  registry.streams.set(id, { lastAnswer: now, close });
  registry.sweeper ??= setInterval(() => sweepSilent(), SWEEP_MS);
  return id;
}

export function forgetStream(id: string): void {
  registry.streams.delete(id);
  if (registry.streams.size === 0 && registry.sweeper) {
    clearInterval(registry.sweeper);
    registry.sweeper = null;
  }
}

/** A tab answered a ping on stream `id`; false when no such stream is open (it was dropped: reconnect). */
export function answered(id: string, now = Date.now()): boolean {
  const stream = registry.streams.get(id);
  if (!stream) return false;
  stream.lastAnswer = now;
  return true;
}

/** Closes every stream silent for longer than SILENCE_MS; returns how many. */
export function sweepSilent(now = Date.now()): number {
  let closed = 0;
  for (const [id, stream] of registry.streams) {
    if (now - stream.lastAnswer <= SILENCE_MS) continue;
    forgetStream(id);
    stream.close();
    closed += 1;
  }
  return closed;
}

export function openStreams(): number {
  return registry.streams.size;
}
