import { afterEach, describe, expect, it } from "vitest";
import { SILENCE_MS, answered, forgetStream, openStream, openStreams, sweepSilent } from "./live-streams";

describe("streams whose tab stopped answering", () => {
  const ids: string[] = [];
  afterEach(() => {
    for (const id of ids.splice(0)) forgetStream(id);
  });

  it("closes a stream left unanswered past SILENCE_MS and keeps one that answers", () => {
    const t0 = 1_000_000;
    const closed: string[] = [];
    const silent = openStream(() => closed.push("silent"), t0);
    const alive = openStream(() => closed.push("alive"), t0);
    ids.push(silent, alive);
    expect(answered(alive, t0 + SILENCE_MS - 1000)).toBe(true);
    expect(sweepSilent(t0 + SILENCE_MS)).toBe(0);
    expect(sweepSilent(t0 + SILENCE_MS + 1)).toBe(1);
    expect(closed).toEqual(["silent"]);
    expect(answered(silent, t0 + SILENCE_MS + 2)).toBe(false);
    expect(openStreams()).toBe(1);
    expect(SILENCE_MS).toBeLessThan(60_000);
  });
});
