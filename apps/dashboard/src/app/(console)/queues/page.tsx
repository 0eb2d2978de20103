import { Queues } from "./queues";

export const dynamic = "force-dynamic";

export default async function QueuesPage({ searchParams }: { searchParams: Promise<{ tenant?: string }> }) {
  const { tenant } = await searchParams;
  return (
    <>
      <h1>Queues</h1>
      <Queues initialTenant={tenant ?? ""} />
    </>
  );
}
