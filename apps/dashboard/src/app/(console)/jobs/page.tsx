import Link from "next/link";
import { JobSearch } from "./job-search";

export const dynamic = "force-dynamic";

export default async function JobsPage({ searchParams }: { searchParams: Promise<{ id?: string; tenant?: string }> }) {
  const { id, tenant } = await searchParams;
  return (
    <>
      <h1>Jobs</h1>
      <p>
        <Link href="/jobs/states">Browse jobs by state</Link>: ready, scheduled, running, completed, dead and cancelled, with cancel, run now and delete.
      </p>
      <JobSearch initial={{ id: id ?? "", tenant: tenant ?? "" }} />
    </>
  );
}
