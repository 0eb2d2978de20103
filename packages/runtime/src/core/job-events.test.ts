import { describe, expect, it } from "vitest";
import { Job } from "./job.js";
import { JobEvents, type JobEventName } from "./job-events.js";

/** `job:enqueued` held while a write is in flight (JobEvents.enqueueing): once, in order, with the backend's answer. */
describe("JobEvents: job:enqueued of a write in flight", () => {
  function listening(): { events: JobEvents; heard: string[] } {
    const events = new JobEvents((error) => {
      throw error;
    });
    const heard: string[] = [];
    for (const name of ["job:enqueued", "job:claimed"] as JobEventName[]) {
      events.on(name, (e) => void heard.push(`${name} ${e.job.id}${"duplicate" in e && e.duplicate ? " (duplicate)" : ""}`));
    }
    return { events, heard };
  }
  const claim = (events: JobEvents, job: Job) => events.emit("job:claimed", { job, queue: "default", workerId: "w", claimedAt: 0 });

  it("emits on settle with each job's answer, and a job claimed first is announced just before its claim, once", () => {
    const { events, heard } = listening();
    const [a, b, c] = [new Job({ task: "t", payload: {} }), new Job({ task: "t", payload: {} }), new Job({ task: "t", payload: {} })];
    const pending = events.enqueueing([a, b, c].map((job) => ({ job, queue: "default", duplicate: false })));
    expect(heard).toEqual([]);
    claim(events, b);
    pending.settle((i) => i === 2);
    expect(heard).toEqual([`job:enqueued ${b.id}`, `job:claimed ${b.id}`, `job:enqueued ${a.id}`, `job:enqueued ${c.id} (duplicate)`]);
    claim(events, a);
    expect(heard.at(-1)).toBe(`job:claimed ${a.id}`);
  });

  it("forgets the jobs of a failed write: nothing announced, not even at a later claim of the same id", () => {
    const { events, heard } = listening();
    const job = new Job({ task: "t", payload: {} });
    events.enqueueing([{ job, queue: "default", duplicate: false }]).abandon();
    claim(events, job);
    expect(heard).toEqual([`job:claimed ${job.id}`]);
  });
});
