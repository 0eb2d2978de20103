import { cookies } from "next/headers";
import type { ReactNode } from "react";
import { Shell } from "~/components/shell";
import { THEME_COOKIE, parseTheme } from "~/components/theme";
import { requirePerson } from "~/server/session";
import { DashboardProvider } from "~/trpc/provider";
import { dashboardConfig } from "~/server/config";

export const dynamic = "force-dynamic";

/**
 * Everything behind the login: without a live session (or the proxy's trusted header) nothing renders but the
 * redirect. Not the only check: src/proxy.ts turns such requests away first, and every page that fetches data
 * checks again, because Next.js skips this layout when the client says it already has it.
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const person = await requirePerson();
  return (
    <DashboardProvider services={dashboardConfig().services.map((s) => s.name)} traceUrl={dashboardConfig().traceUrl} person={{ name: person.name, role: person.role, via: person.via }}>
      <Shell theme={parseTheme((await cookies()).get(THEME_COOKIE)?.value)}>{children}</Shell>
    </DashboardProvider>
  );
}
