import { describe, expect, it } from "vitest";
import { Job } from "../../core/job.js";
import { Leases } from "./leases.js";
import type { Delivery } from "./subscription.js";

/** The lease table's one timer: each lease ends at its own time, an extended one later, a settled one never. */
describe("rabbitmq: the lease table", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  function delivery(job: Job): Delivery {
    return { sub: { alive: true } as Delivery["sub"], message: {} as Delivery["message"], json: job.toJSON(), workerId: null, lockedUntil: null, settled: false };
  }

  it("gives back each delivery when its own lease ends, after an extension for the extended one, never a settled one", async () => {
    const expired: string[] = [];
    const leases = new Leases((d) => void expired.push(d.json.id));
    const [short, extended, settled, late] = [0, 1, 2, 3].map(() => new Job({ task: "t", payload: {} }));
    const now = Date.now();
    leases.hold(delivery(short!), short!, { workerId: "w", now, leaseMs: 200 });
    leases.hold(delivery(extended!), extended!, { workerId: "w", now, leaseMs: 200 });
    leases.hold(delivery(settled!), settled!, { workerId: "w", now, leaseMs: 200 });
    leases.hold(delivery(late!), late!, { workerId: "w", now, leaseMs: 700 });
    expect(leases.take("w", settled!)).not.toBeNull();
    await sleep(100);
    leases.extend({ workerId: "w", jobIds: [extended!.id], leaseMs: 300 });
    await sleep(200);
    expect(expired).toEqual([short!.id]);
    await sleep(250);
    expect(expired).toEqual([short!.id, extended!.id]);
    await sleep(300);
    expect(expired).toEqual([short!.id, extended!.id, late!.id]);
    expect(leases.count).toBe(0);
    leases.clearTimers();
  });
});
