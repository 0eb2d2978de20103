import { LIVE_POLL_MS, subscribeLive } from "~/server/live-hub";
import { currentPerson } from "~/server/session";

export const dynamic = "force-dynamic";

const KEEP_ALIVE_MS = 15_000;

/**
 * Server-sent events: `event: service` with a LiveMessage whenever a service's overview changes (its state on
 * connect first). `no-transform` keeps compressing proxies, and Next's own compression, from buffering it.
 */
export async function GET(request: Request) {
  if (!(await currentPerson())) return new Response("log in to the dashboard first", { status: 401 });
  const encoder = new TextEncoder();
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      const send = (text: string) => {
        if (closed) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      send(`retry: 3000\nevent: hello\ndata: ${JSON.stringify({ pollMs: LIVE_POLL_MS })}\n\n`);
      const unsubscribe = subscribeLive((message) => send(`event: service\ndata: ${JSON.stringify(message)}\n\n`));
      const keepAlive = setInterval(() => send(`: keep-alive\n\n`), KEEP_ALIVE_MS);
      stop = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(keepAlive);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      request.signal.addEventListener("abort", stop);
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
