import { WithFirstData } from "~/server/prefetch";
import { Queues } from "./queues";

export const dynamic = "force-dynamic";

export default async function QueuesPage({ searchParams }: { searchParams: Promise<{ tenant?: string }> }) {
  const { tenant } = await searchParams;
  return (
    <>
      <h1>Queues</h1>
      {/* The depths per task (the same input the page asks with) and the token's role come with the HTML. */}
      <WithFirstData queries={(trpc) => [trpc.queues.list.queryOptions(tenant ? { tenant } : undefined), trpc.overview.whoami.queryOptions()]}>
        <Queues initialTenant={tenant ?? ""} />
      </WithFirstData>
    </>
  );
}
