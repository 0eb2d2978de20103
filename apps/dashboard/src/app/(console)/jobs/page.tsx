import { JobSearch } from "./job-search";

export const dynamic = "force-dynamic";

export default async function JobsPage({ searchParams }: { searchParams: Promise<{ id?: string; tenant?: string }> }) {
  const { id, tenant } = await searchParams;
  return (
    <>
      <h1>Jobs</h1>
      <JobSearch initial={{ id: id ?? "", tenant: tenant ?? "" }} />
    </>
  );
}
