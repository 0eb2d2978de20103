/** Jobs a state holds past which the PostgreSQL queue estimates its count (docs/postgres.md#a-large-backlog-exact-up-to-50-000-estimated-beyond). */
const EXACT_UP_TO = 50_000;

/**
 * A count of jobs, shown with "≈" when the backend estimated it (`estimated` on the depths it came with): said so
 * on hover and to a screen reader. A count of a state below the exact limit was counted, whatever the others were.
 */
export function EstimatedCount({ n, estimated }: { n: number; estimated: boolean | undefined }) {
  if (!estimated || n < EXACT_UP_TO) return <>{n}</>;
  return (
    <span title="estimated from a sample of the table: more than 50 000 jobs are not counted one by one" data-estimated="">
      ≈ {n.toLocaleString("en-US")}
      <span className="sr-only"> (estimated)</span>
    </span>
  );
}
