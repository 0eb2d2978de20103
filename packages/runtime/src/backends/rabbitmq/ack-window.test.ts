import { describe, expect, it } from "vitest";
import { AckWindow } from "./ack-window.js";

/** Runs the window with a manual end of turn; `sent` is what reached the channel. */
function windowOf(tags: number) {
  const sent: Array<[number, boolean]> = [];
  let pending: (() => void) | null = null;
  const window = new AckWindow(
    (tag, multiple) => sent.push([tag, multiple]),
    (flush) => (pending = flush),
  );
  for (let tag = 1; tag <= tags; tag++) window.delivered(tag);
  const endTurn = () => {
    const flush = pending;
    pending = null;
    flush?.();
  };
  return { window, sent, endTurn };
}

describe("rabbitmq: acks of one channel sent together", () => {
  it("sends the acks of one turn as one multiple ack when they complete a run from the oldest delivery", () => {
    const { window, sent, endTurn } = windowOf(10);
    for (const tag of [3, 1, 2]) window.ack(tag);
    expect(sent).toEqual([]);
    endTurn();
    expect(sent).toEqual([[3, true]]);
  });

  it("never covers a delivery still running: acks past it go one by one", () => {
    const { window, sent, endTurn } = windowOf(10);
    for (const tag of [1, 2, 4, 6]) window.ack(tag);
    endTurn();
    expect(sent).toEqual([
      [2, true],
      [4, false],
      [6, false],
    ]);
    // 3 finishes: the run now reaches 4 (sent already) and stops at 5.
    window.ack(3);
    endTurn();
    expect(sent.slice(3)).toEqual([[3, true]]);
    window.ack(5);
    window.ack(7);
    endTurn();
    // 5 closes the run through 6 (sent) to 7.
    expect(sent.slice(4)).toEqual([[7, true]]);
  });

  it("passes over a delivery nacked by a frame of its own", () => {
    const { window, sent, endTurn } = windowOf(5);
    window.settledElsewhere(2);
    window.ack(1);
    window.ack(3);
    endTurn();
    expect(sent).toEqual([[3, true]]);
  });

  it("flush() sends at once, and an ack after it waits for the next turn", () => {
    const { window, sent, endTurn } = windowOf(5);
    window.ack(1);
    window.flush();
    expect(sent).toEqual([[1, true]]);
    window.ack(2);
    expect(sent).toHaveLength(1);
    endTurn();
    expect(sent).toEqual([
      [1, true],
      [2, true],
    ]);
    endTurn();
    expect(sent).toHaveLength(2);
  });

  it("settles each delivery once over many turns, in any order (a long run, compacted)", () => {
    const n = 5000;
    const { window, sent, endTurn } = windowOf(n);
    // Deliveries finish out of order, a few per turn; every tag must end up settled exactly once at the broker.
    const order = Array.from({ length: n }, (_, i) => i + 1).sort((a, b) => ((a * 7919) % 13) - ((b * 7919) % 13) || a - b);
    for (let i = 0; i < order.length; i++) {
      window.ack(order[i]!);
      if (i % 7 === 6) endTurn();
    }
    endTurn();
    const settled = new Set<number>();
    let covered = 0;
    for (const [tag, multiple] of sent) {
      if (multiple) {
        for (let t = covered + 1; t <= tag; t++) settled.add(t);
        covered = Math.max(covered, tag);
      } else {
        expect(settled.has(tag)).toBe(false);
        settled.add(tag);
      }
    }
    expect(settled.size).toBe(n);
    expect(sent.length).toBeLessThan(n);
  });
});
