"use client";
import { REFRESH_MS } from "~/trpc/query-client";
import { useLive } from "~/trpc/live";

const TEXT = { connecting: "connecting…", sse: "live (SSE)", polling: `polling every ${REFRESH_MS / 1000} s` } as const;
const TITLE = {
  connecting: "Opening the live stream",
  sse: "Server-sent events: views refresh when the dashboard's server sees a service change",
  polling: "The live stream is not available (a proxy may block it): views poll the services instead",
} as const;

/** Which live mode is on: server-sent events, or polling as the fallback. */
export function LiveIndicator() {
  const { mode, updates } = useLive();
  return (
    <div className={`live live-${mode}`} role="status" aria-label="Live updates" data-live-mode={mode} data-live-updates={updates} title={`${TITLE[mode]} (${updates} update${updates === 1 ? "" : "s"} received)`}>
      <span className="live-dot" aria-hidden="true" />
      {TEXT[mode]}
    </div>
  );
}
