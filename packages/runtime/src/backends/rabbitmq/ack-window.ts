/**
 * The acks of one consuming channel, sent together: the outcomes settled during one turn of the event loop go
 * out as a single `basic.ack` with `multiple` set for the run of deliveries they complete from the oldest one
 * still unacked, and one ack each for the others. At concurrency 10 a worker settles several jobs per turn, and
 * the broker parses and routes one frame instead of several (each ack was its own frame and socket write).
 *
 * A multiple ack settles every delivery up to its tag that the broker still holds for the channel, so it is sent
 * only for a run with no delivery still running or waiting in it: such a run starts at the oldest delivery not
 * settled and ends before the first one that is not. A delivery settled otherwise (nacked back: a lost lease, a
 * failed re-route) is no longer held by the broker and may sit inside a run. Acks wait at most until the end of
 * the turn (`schedule`); `flush()` sends them at once where the order matters (before a round trip that must
 * find them applied, before the channel closes).
 */
export class AckWindow {
  /** Delivery tags in the order the broker sent them; those before `head` are settled and sent. */
  private readonly tags: number[] = [];
  private head = 0;
  /** Acked here, not sent yet. */
  private readonly acked = new Set<number>();
  /** Settled at the broker by another frame (a nack, or an ack sent on its own). */
  private readonly gone = new Set<number>();
  private scheduled = false;

  constructor(
    private readonly send: (tag: number, multiple: boolean) => void,
    private readonly schedule: (flush: () => void) => void = (flush) => void setImmediate(flush),
  ) {}

  delivered(tag: number): void {
    this.tags.push(tag);
  }

  ack(tag: number): void {
    this.acked.add(tag);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  /** The delivery was settled by a frame of its own (a nack); a later multiple ack may pass over it. */
  settledElsewhere(tag: number): void {
    this.gone.add(tag);
  }

  flush(): void {
    this.scheduled = false;
    if (this.acked.size === 0) return;
    let last = -1;
    while (this.head < this.tags.length) {
      const tag = this.tags[this.head]!;
      if (this.acked.delete(tag)) last = tag;
      else if (!this.gone.delete(tag)) break;
      this.head++;
    }
    if (last >= 0) this.send(last, true);
    for (const tag of this.acked) {
      this.send(tag, false);
      this.gone.add(tag);
    }
    this.acked.clear();
    if (this.head >= 1024 && this.head * 2 >= this.tags.length) {
      this.tags.splice(0, this.head);
      this.head = 0;
    }
  }
}
