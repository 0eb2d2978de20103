import { dashboardConfig } from "~/server/config";
import { requirePerson } from "~/server/session";
import { serviceClient } from "~/trpc/server";
import { WithFirstData } from "~/server/prefetch";
import { OverviewGrid, type InitialOverview } from "./_overview/overview-grid";
import { THROUGHPUT_MINUTES } from "./_overview/throughput";

export const dynamic = "force-dynamic";

/** First paint comes from the server (one client per service, in parallel); the browser then keeps it live. */
export default async function OverviewPage() {
  const { services } = dashboardConfig();
  const person = await requirePerson();
  const settled = await Promise.allSettled(services.map((s) => serviceClient(s, person).overview.get.query()));
  const initial: InitialOverview[] = services.map((s, i) => {
    const result = settled[i]!;
    return result.status === "fulfilled" ? { service: s.name, data: result.value, error: null } : { service: s.name, data: null, error: (result.reason as Error).message };
  });
  return (
    <>
      <h1>Overview</h1>
      {/* The throughput sparkline, the next tick and the outbox line of each card come with the HTML too. */}
      <WithFirstData queries={(trpc) => [trpc.overview.throughput.queryOptions({ minutes: THROUGHPUT_MINUTES }), trpc.schedules.list.queryOptions({ count: 1 }), trpc.outbox.status.queryOptions()]}>
        <OverviewGrid initial={initial} />
      </WithFirstData>
    </>
  );
}
