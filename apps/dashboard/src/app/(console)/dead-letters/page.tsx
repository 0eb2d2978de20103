import { DeadLetters } from "./dead-letters";

export const dynamic = "force-dynamic";

export default async function DeadLettersPage({ searchParams }: { searchParams: Promise<{ service?: string }> }) {
  const { service } = await searchParams;
  return (
    <>
      <h1>Dead letters</h1>
      <DeadLetters initialService={service ?? ""} />
    </>
  );
}
