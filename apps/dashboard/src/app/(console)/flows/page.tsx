import { FlowList } from "./flow-list";

export const dynamic = "force-dynamic";

export default async function FlowsPage({ searchParams }: { searchParams: Promise<{ service?: string; state?: string }> }) {
  const { service, state } = await searchParams;
  return (
    <>
      <h1>Flows</h1>
      <FlowList initialService={service ?? ""} initialState={state ?? ""} />
    </>
  );
}
