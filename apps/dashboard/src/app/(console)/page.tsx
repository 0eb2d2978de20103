import { dashboardConfig } from "~/server/config";
import { currentPerson } from "~/server/session";
import { serviceClient } from "~/trpc/server";
import { OverviewGrid, type InitialOverview } from "./_overview/overview-grid";

export const dynamic = "force-dynamic";

/** First paint comes from the server (one client per service, in parallel); the browser then keeps it live. */
export default async function OverviewPage() {
  const { services } = dashboardConfig();
  const person = await currentPerson();
  const settled = await Promise.allSettled(services.map((s) => serviceClient(s, person).overview.get.query()));
  const initial: InitialOverview[] = services.map((s, i) => {
    const result = settled[i]!;
    return result.status === "fulfilled" ? { service: s.name, data: result.value, error: null } : { service: s.name, data: null, error: (result.reason as Error).message };
  });
  return (
    <>
      <h1>Overview</h1>
      <OverviewGrid initial={initial} />
    </>
  );
}
