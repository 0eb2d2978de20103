import Link from "next/link";
import { WithFirstData } from "~/server/prefetch";
import { JobSearch } from "./job-search";
import { NewJobButton } from "./new-job-button";

export const dynamic = "force-dynamic";

export default async function JobsPage({ searchParams }: { searchParams: Promise<{ id?: string; tenant?: string }> }) {
  const { id, tenant } = await searchParams;
  return (
    <>
      <h1>Jobs</h1>
      <NewJobButton />
      <p>
        <Link href="/jobs/states">Browse jobs by state</Link>: ready, scheduled, running, completed, dead and cancelled, with cancel, run now and delete.
      </p>
      {/* The task names the search suggests come with the HTML. */}
      <WithFirstData queries={(trpc) => [trpc.overview.tasks.queryOptions()]}>
        <JobSearch initial={{ id: id ?? "", tenant: tenant ?? "" }} />
      </WithFirstData>
    </>
  );
}
