import type { ReactNode } from "react";

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" role="status">
      <div className="empty-title">{title}</div>
      {children ? <div>{children}</div> : null}
    </div>
  );
}

export function ErrorState({ title, error }: { title: string; error: unknown }) {
  return (
    <div className="alert alert-bad" role="alert">
      <strong>{title}</strong> {(error as Error)?.message ?? String(error)}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <div className="empty" role="status" aria-live="polite">
      Loading {what}…
    </div>
  );
}
