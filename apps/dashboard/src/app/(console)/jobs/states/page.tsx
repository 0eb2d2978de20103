import { JobStates } from "./job-states";

export const dynamic = "force-dynamic";

export default async function JobStatesPage({ searchParams }: { searchParams: Promise<{ service?: string; state?: string }> }) {
  const { service, state } = await searchParams;
  return (
    <>
      <h1>Jobs by state</h1>
      <JobStates initialService={service ?? ""} initialState={state ?? ""} />
    </>
  );
}
