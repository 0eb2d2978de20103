"use client";
import { useEffect, useRef, type ReactNode } from "react";
import { Button } from "./button";

/**
 * A side panel over the page; Escape or the close button dismisses it, focus moves into it when it opens (once: a
 * page that re-renders with a new `onClose`, as live data does every few seconds, must not pull the focus back
 * from the button a keyboard user has moved to).
 */
export function Drawer({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const panel = useRef<HTMLDivElement>(null);
  const close = useRef(onClose);
  useEffect(() => {
    close.current = onClose;
  });
  useEffect(() => {
    panel.current?.focus();
    const onKey = (event: KeyboardEvent) => event.key === "Escape" && close.current();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return (
    <div className="drawer-backdrop" onClick={onClose}>
      <div className="drawer" role="dialog" aria-modal="true" aria-label={title} tabIndex={-1} ref={panel} onClick={(e) => e.stopPropagation()}>
        <div className="card-header">
          <h2 className="card-title">{title}</h2>
          <Button onClick={onClose}>Close</Button>
        </div>
        {children}
      </div>
    </div>
  );
}
