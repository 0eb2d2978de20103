import type { ReactNode } from "react";

export type Tone = "ok" | "warn" | "bad" | "info" | "neutral";

export function Badge({ tone = "neutral", children, title }: { tone?: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** The colour of a health status as /ready reports it. */
export function statusTone(status: string | null | undefined): Tone {
  if (status === "ok") return "ok";
  if (status === "degraded") return "warn";
  if (status === "unavailable" || status === "down") return "bad";
  return "neutral";
}
