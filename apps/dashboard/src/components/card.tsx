import type { ReactNode } from "react";

export function Card({ title, actions, children, label }: { title?: ReactNode; actions?: ReactNode; children: ReactNode; label?: string }) {
  return (
    <section className="card" aria-label={label}>
      {(title || actions) && (
        <div className="card-header">
          {title ? <h2 className="card-title">{title}</h2> : <span />}
          {actions ? <div className="row">{actions}</div> : null}
        </div>
      )}
      {children}
    </section>
  );
}

export function Stat({ label, value, bad }: { label: string; value: ReactNode; bad?: boolean }) {
  return (
    <div className={`stat${bad ? " stat-bad" : ""}`} data-stat={label}>
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
    </div>
  );
}
