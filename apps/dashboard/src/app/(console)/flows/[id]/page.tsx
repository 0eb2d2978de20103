import Link from "next/link";
import { FlowDetail } from "./flow-detail";

export const dynamic = "force-dynamic";

export default async function FlowPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ service?: string }> }) {
  const { id } = await params;
  const { service } = await searchParams;
  return (
    <>
      <p>
        <Link href={`/flows${service ? `?service=${encodeURIComponent(service)}` : ""}`}>← Flows</Link>
      </p>
      <FlowDetail service={service ?? ""} id={decodeURIComponent(id)} />
    </>
  );
}
