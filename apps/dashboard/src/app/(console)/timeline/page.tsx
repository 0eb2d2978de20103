import { Timeline } from "./timeline";

export const dynamic = "force-dynamic";

export default async function TimelinePage({ searchParams }: { searchParams: Promise<{ id?: string }> }) {
  const { id } = await searchParams;
  return (
    <>
      <h1>Timeline</h1>
      {/* Keyed by the id: following a Timeline link from this page's own drawer starts over with the new id. */}
      <Timeline key={id ?? ""} initialId={id?.trim() ?? ""} />
    </>
  );
}
