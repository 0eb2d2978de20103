/**
 * The ids this process enqueued most recently, oldest forgotten first. RabbitMQ cannot answer "is there a
 * message with this id?", so this is how a repeated enqueue of the same id stays a no-op here; see
 * docs/rabbitmq.md#limits for what it does not cover (other processes, ids older than the window).
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      // A Set iterates in insertion order: the first value is the oldest.
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }
}
