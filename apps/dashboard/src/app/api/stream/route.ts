import { LIVE_POLL_MS, subscribeLive } from "~/server/live-hub";
import { PING_MS, forgetStream, openStream } from "~/server/live-streams";
import { currentPerson } from "~/server/session";

export const dynamic = "force-dynamic";

/** Pushes queued for a client that stopped reading: past this many it is dropped at once. */
const MAX_UNREAD = 200;

/**
 * Server-sent events: `event: service` with a LiveMessage whenever a service's overview changes (its state on
 * connect first), saying which parts changed. `event: ping` every PING_MS carries the stream's id; the tab
 * answers at /api/stream/pong, and a stream left unanswered is closed (server/live-streams.ts). `no-transform`
 * keeps compressing proxies, and Next's own compression, from buffering it.
 */
export async function GET(request: Request) {
  if (!(await currentPerson())) return new Response("log in to the dashboard first", { status: 401 });
  const encoder = new TextEncoder();
  let stop = (_error?: Error) => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      // A client that stopped reading or answering: error the stream so the server drops the connection too
      // (closing would wait for the unread pushes to drain).
      const drop = () => stop(new Error("the client stopped answering"));
      const send = (text: string) => {
        if (closed) return;
        // Chunks pile up in the stream while the client reads nothing.
        if ((controller.desiredSize ?? 0) < -MAX_UNREAD) return drop();
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const id = openStream(() => drop());
      send(`retry: 3000\nevent: hello\ndata: ${JSON.stringify({ pollMs: LIVE_POLL_MS, pingMs: PING_MS })}\n\n`);
      const unsubscribe = subscribeLive((message) => send(`event: service\ndata: ${JSON.stringify(message)}\n\n`));
      const ping = setInterval(() => send(`event: ping\ndata: ${id}\n\n`), PING_MS);
      stop = (error) => {
        if (closed) return;
        closed = true;
        forgetStream(id);
        unsubscribe();
        clearInterval(ping);
        try {
          if (error) controller.error(error);
          else controller.close();
        } catch {
          // already closed by the client
        }
      };
      request.signal.addEventListener("abort", () => stop());
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}
