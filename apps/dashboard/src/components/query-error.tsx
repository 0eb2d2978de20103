import { isMissingProcedure } from "~/trpc/errors";
import { EmptyState, ErrorState } from "./empty-state";

/** A failed admin call: "not offered" when the service's runtime predates the procedure, else the error itself. */
export function QueryError({ service, procedure, error, what }: { service: string; procedure: string; error: unknown; what: string }) {
  if (isMissingProcedure(error)) {
    return (
      <EmptyState title={`Not offered by ${service}`}>
        {service} runs a version of <code>@jfast/runtime</code> without <code>{procedure}</code>: upgrade it to see {what} (<code>jfast docs admin-api</code>).
      </EmptyState>
    );
  }
  return <ErrorState title={`${service}:`} error={error} />;
}
