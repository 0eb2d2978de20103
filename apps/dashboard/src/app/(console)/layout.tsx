import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { Shell } from "~/components/shell";
import { hasSession } from "~/server/session";
import { DashboardProvider } from "~/trpc/provider";
import { dashboardConfig } from "~/server/config";

export const dynamic = "force-dynamic";

/** Everything behind the login: without a valid session cookie nothing renders but the redirect. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  if (!(await hasSession())) redirect("/login");
  return (
    <DashboardProvider services={dashboardConfig().services.map((s) => s.name)} traceUrl={dashboardConfig().traceUrl}>
      <Shell>{children}</Shell>
    </DashboardProvider>
  );
}
