/**
 * Where cancellations wait for a job a backend cannot reach where it waits (RabbitMQ: a message in the middle of
 * a queue). The service provides it (its database); the backend reads it incrementally and drops a cancelled
 * job's message when it arrives.
 */
export interface CancelStore {
  readonly kind: "sql";
  /** Records that `id` is cancelled; false when it was recorded before. */
  record(params: { id: string }): Promise<boolean>;
  /** Ids recorded after `after` (the cursor of a previous answer; null: from the first), oldest first. */
  since(params: { after: string | null; limit: number }): Promise<{ ids: string[]; cursor: string | null }>;
}
