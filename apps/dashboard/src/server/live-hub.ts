import { dashboardConfig, type ServiceConfig } from "./config";
import { LIVE_PARTS, changedParts, partPrints, type LiveMessage, type PartPrints } from "./live-change";
import { pollerClient } from "~/trpc/server";

/** How often the dashboard's server asks every service for its overview while at least one browser listens. */
export const LIVE_POLL_MS = 2000;

type Listener = (message: LiveMessage) => void;

interface Hub {
  listeners: Set<Listener>;
  latest: Map<string, { message: LiveMessage; prints: PartPrints }>;
  inFlight: Set<string>;
  timer: ReturnType<typeof setInterval> | null;
}

// One hub per dashboard process, however many browsers listen: each service sees one overview call per interval.
// Kept on globalThis so the development server's module reloads do not start a second poller.
const hub: Hub = ((globalThis as { __jfastLiveHub?: Hub }).__jfastLiveHub ??= { listeners: new Set(), latest: new Map(), inFlight: new Set(), timer: null });

/**
 * Adds a listener: it gets the last known state of every service at once (every part marked changed: its views
 * may be older), then every change. The poller runs only while someone listens.
 */
export function subscribeLive(listener: Listener): () => void {
  hub.listeners.add(listener);
  for (const { message } of hub.latest.values()) listener({ ...message, changed: [...LIVE_PARTS] });
  if (!hub.timer) {
    hub.timer = setInterval(tick, LIVE_POLL_MS);
    tick();
  }
  return () => {
    hub.listeners.delete(listener);
    if (hub.listeners.size === 0 && hub.timer) {
      clearInterval(hub.timer);
      hub.timer = null;
      hub.latest.clear();
    }
  };
}

function tick(): void {
  for (const service of dashboardConfig().services) {
    // A service slower than the interval (up to the 10 s timeout) is not asked again until it answered.
    if (hub.inFlight.has(service.name)) continue;
    hub.inFlight.add(service.name);
    void poll(service).finally(() => hub.inFlight.delete(service.name));
  }
}

async function poll(service: ServiceConfig): Promise<void> {
  const client = pollerClient(service);
  let message: LiveMessage;
  try {
    const overview = await client.overview.get.query();
    const [outbox, events] = await Promise.all([
      overview.plugins.includes("outbox") ? client.outbox.status.query().catch(() => null) : null,
      (overview.plugins.includes("kafka") || overview.plugins.includes("events")) ? client.events.status.query().catch(() => null) : null,
    ]);
    message = { service: service.name, at: new Date().toISOString(), overview, outbox, events, error: null, changed: [] };
  } catch (error) {
    message = { service: service.name, at: new Date().toISOString(), overview: null, outbox: null, events: null, error: (error as Error).message, changed: [] };
  }
  const prints = partPrints(message);
  message.changed = changedParts(hub.latest.get(service.name)?.prints, prints);
  if (message.changed.length === 0) return;
  hub.latest.set(service.name, { message, prints });
  for (const listener of hub.listeners) listener(message);
}
