"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import type { ReactNode } from "react";
import { withBase } from "~/base-path";
import { usePerson } from "~/trpc/provider";
import { LiveIndicator } from "./live-indicator";
import type { Theme } from "./theme";
import { ThemeToggle } from "./theme-toggle";

const PAGES = [
  { href: "/", label: "Overview" },
  { href: "/queues", label: "Queues" },
  { href: "/stats", label: "Stats" },
  { href: "/workers", label: "Workers" },
  { href: "/alerts", label: "Alerts" },
  { href: "/dead-letters", label: "Dead letters" },
  { href: "/jobs", label: "Jobs" },
  { href: "/flows", label: "Flows" },
  { href: "/timeline", label: "Timeline" },
  { href: "/schedules", label: "Schedules" },
  { href: "/outbox", label: "Outbox" },
  { href: "/events", label: "Events (Kafka)" },
  { href: "/contracts", label: "Contracts" },
  { href: "/audit", label: "Audit trail" },
] as const;

/** The side bar and the page. `theme`: the theme cookie as the server read it. */
export function Shell({ theme, children }: { theme: Theme; children: ReactNode }) {
  const path = usePathname();
  const person = usePerson();
  return (
    <div className="shell">
      <nav className="nav" aria-label="Main">
        <div className="brand">jfast</div>
        {PAGES.map((page) => (
          // No prefetch: every page renders with its data on the server, and prefetching them all on each load
          // would ask each service for every page's data while this page waits for its own.
          <Link key={page.href} href={page.href} prefetch={false} aria-current={path === page.href ? "page" : undefined}>
            {page.label}
          </Link>
        ))}
        <div className="spacer" />
        <LiveIndicator />
        <ThemeToggle initial={theme} />
        <p className="signed-in" data-person={person.name}>
          {person.name} <span className="muted">({person.role})</span>
        </p>
        {person.via === "session" ? (
          <form action={withBase("/api/logout")} method="post">
            <button className="button button-small" type="submit">
              Log out
            </button>
          </form>
        ) : null}
      </nav>
      <main className="main">{children}</main>
    </div>
  );
}
