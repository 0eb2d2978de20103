/**
 * One dashboard tab without a browser: the calls its page makes, replayed through the dashboard's server as the
 * page makes them. It opens the live stream, answers its pings, and on each push re-reads the views of the page
 * that show a part the push says changed (the dashboard's own rule, apps/dashboard/src/server/live-change.ts),
 * plus every view every 30 s (the dashboard's safety refetch).
 */
import http from "node:http";
import { LIVE_PARTS, isStale, rereadDelay, type LiveMessage } from "../../apps/dashboard/src/server/live-change.js";

export interface View {
  procedure: string;
  input?: unknown;
}

/** What each page of the dashboard reads for one service (as its components ask; overview.get comes with pushes). */
export const PAGES: Record<string, View[]> = {
  overview: [{ procedure: "overview.throughput", input: { minutes: 60 } }, { procedure: "schedules.list", input: { count: 1 } }, { procedure: "outbox.status" }],
  deadLetters: [{ procedure: "deadLetters.list", input: { limit: 100, filter: {} } }, { procedure: "deadLetters.replays" }, { procedure: "overview.whoami" }, { procedure: "overview.tasks" }],
  queues: [{ procedure: "queues.list" }, { procedure: "overview.whoami" }],
  jobs: [{ procedure: "jobs.list", input: { state: "ready", limit: 50 } }, { procedure: "overview.whoami" }, { procedure: "overview.tasks" }],
};

const SAFETY_REFRESH_MS = 30_000;

export interface ReplayTab {
  calls(): number;
  errors(): number;
  pushes(): number;
  /** Bytes the tab received from the dashboard (answers and the stream). */
  bytes(): number;
  /** Vanish without closing the stream: stop reading and answering, keep the connection open. */
  freeze(): void;
  close(): void;
}

export function openTab(params: { dashboard: string; cookie: string; service: string; page: View[] }): ReplayTab {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let calls = 0;
  let errors = 0;
  let pushes = 0;
  let bytes = 0;
  let closed = false;
  let frozen = false;
  const inFlight = new Set<string>();
  const readAt = new Map<string, number>();
  const deferred = new Map<string, ReturnType<typeof setTimeout>>();
  const headers = { cookie: params.cookie, origin: params.dashboard };

  const read = (view: View) => {
    if (closed || frozen || inFlight.has(view.procedure)) return;
    inFlight.add(view.procedure);
    const query = view.input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(view.input))}`;
    const request = http.get(`${params.dashboard}/api/admin/${params.service}/${view.procedure}${query}`, { agent, headers }, (response) => {
      response.on("data", (chunk: Buffer) => (bytes += chunk.length));
      response.on("end", () => {
        inFlight.delete(view.procedure);
        readAt.set(view.procedure, Date.now());
        calls += 1;
        if (response.statusCode !== 200) errors += 1;
      });
    });
    request.on("error", () => {
      inFlight.delete(view.procedure);
      errors += 1;
    });
  };
  const readStale = (message: LiveMessage) => {
    if (message.service !== params.service) return;
    // A dashboard from before the parts sends none: its pages re-read every view on every push, at once.
    const legacy = message.changed === undefined;
    for (const view of params.page) {
      if (!isStale(view.procedure, message.changed ?? LIVE_PARTS, message.error !== null)) continue;
      const wait = legacy ? 0 : rereadDelay(view.procedure, readAt.get(view.procedure) ?? 0, Date.now());
      if (wait === 0) read(view);
      else if (!deferred.has(view.procedure)) {
        deferred.set(view.procedure, setTimeout(() => {
          deferred.delete(view.procedure);
          read(view);
        }, wait));
      }
    }
  };

  // The page's first load (the server rendered it with its data), then what pushes and the safety net ask for.
  for (const view of params.page) read(view);
  const safety = setInterval(() => params.page.forEach(read), SAFETY_REFRESH_MS);

  let stream: http.ClientRequest | null = null;
  const connect = () => {
    if (closed) return;
    stream = http.get(`${params.dashboard}/api/stream`, { headers: { ...headers, accept: "text/event-stream" } }, (response) => {
      let buffer = "";
      response.setEncoding("utf8");
      response.on("data", (text: string) => {
        bytes += Buffer.byteLength(text);
        buffer += text;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === "service" && data) {
            pushes += 1;
            readStale(JSON.parse(data) as LiveMessage);
          } else if (event === "ping" && data) {
            http.request(`${params.dashboard}/api/stream/pong?id=${encodeURIComponent(data)}`, { method: "POST", agent, headers }, (r) => r.resume()).on("error", () => {}).end();
          }
        }
      });
      // The server closed it (a restart, a dropped stream): reconnect as EventSource does after `retry`.
      response.on("end", () => setTimeout(connect, 3000));
    });
    stream.on("error", () => setTimeout(connect, 3000));
  };
  connect();

  return {
    calls: () => calls,
    errors: () => errors,
    pushes: () => pushes,
    bytes: () => bytes,
    freeze() {
      frozen = true;
      clearInterval(safety);
      // Stop reading: the socket stays open, the kernel buffers fill, nothing is acknowledged above TCP.
      (stream as unknown as { socket?: { pause(): void } } | null)?.socket?.pause();
    },
    close() {
      closed = true;
      clearInterval(safety);
      for (const timer of deferred.values()) clearTimeout(timer);
      stream?.destroy();
      agent.destroy();
    },
  };
}
