import { dashboardConfig } from "~/server/config";
import { WithFirstData } from "~/server/prefetch";
import { BlockedKeys } from "./blocked-keys";
import { DeadLetters } from "./dead-letters";

export const dynamic = "force-dynamic";

export default async function DeadLettersPage({ searchParams }: { searchParams: Promise<{ service?: string }> }) {
  const { service } = await searchParams;
  const chosen = dashboardConfig().services.some((s) => s.name === service) ? service : undefined;
  return (
    <>
      <h1>Dead letters</h1>
      {/* The first 100 dead letters of the chosen service (or of each), as the page first asks for them, with
          the throttled replays, the token's role and the task names the filter suggests. */}
      <WithFirstData
        services={chosen ? [chosen] : undefined}
        queries={(trpc) => [trpc.deadLetters.list.queryOptions({ limit: 100, filter: {} }), trpc.deadLetters.replays.queryOptions(), trpc.overview.whoami.queryOptions(), trpc.overview.tasks.queryOptions()]}
      >
        <DeadLetters initialService={service ?? ""} />
        <BlockedKeys />
      </WithFirstData>
    </>
  );
}
