import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { Shell } from "~/components/shell";
import { THEME_COOKIE, parseTheme } from "~/components/theme";
import { currentPerson } from "~/server/session";
import { DashboardProvider } from "~/trpc/provider";
import { dashboardConfig } from "~/server/config";

export const dynamic = "force-dynamic";

/** Everything behind the login: without a live session (or the proxy's trusted header) nothing renders but the redirect. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const person = await currentPerson();
  if (!person) redirect("/login");
  return (
    <DashboardProvider services={dashboardConfig().services.map((s) => s.name)} traceUrl={dashboardConfig().traceUrl} person={{ name: person.name, role: person.role, via: person.via }}>
      <Shell theme={parseTheme((await cookies()).get(THEME_COOKIE)?.value)}>{children}</Shell>
    </DashboardProvider>
  );
}
