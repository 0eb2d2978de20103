import { describe, expect, it } from "vitest";
import { planBatch, planFlow, type FlowStepInput } from "./flow.js";
import { Job } from "./job.js";

const job = (step = "x") => new Job({ task: "orders.step", payload: { step } });

describe("planFlow", () => {
  it("orders parents before children, and gives each job its place, children and count of parents", () => {
    const charge = job("charge");
    const reserve = job("reserve");
    const ship = job("ship");
    const notify = job("notify");
    const plan = planFlow({
      name: "order.fulfil",
      steps: { notify: { job: notify, after: ["ship"] }, ship: { job: ship, after: ["charge", "reserve"] }, charge, reserve },
    });
    const names = plan.steps.map((s) => s.name);
    expect(names.indexOf("ship")).toBeGreaterThan(names.indexOf("charge"));
    expect(names.indexOf("ship")).toBeGreaterThan(names.indexOf("reserve"));
    expect(names.indexOf("notify")).toBeGreaterThan(names.indexOf("ship"));
    expect(plan).toMatchObject({ name: "order.fulfil", kind: "flow", tenantId: null });
    const byName = Object.fromEntries(plan.steps.map((s) => [s.name, s]));
    expect(byName.charge).toMatchObject({ pending: 0, children: [ship.id] });
    expect(byName.ship).toMatchObject({ pending: 2, children: [notify.id] });
    expect(byName.notify).toMatchObject({ pending: 1, children: [] });
    expect(ship.flow).toEqual({ id: plan.id, step: "ship", after: { charge: charge.id, reserve: reserve.id } });
    expect(ship.toJSON().flow).toEqual(ship.flow);
    expect(Job.fromJSON(JSON.parse(JSON.stringify(ship.toJSON()))).flow).toEqual(ship.flow);
    expect(charge.flow).toEqual({ id: plan.id, step: "charge", after: {} });
  });

  it("refuses an empty flow, an unknown step, a cycle, a step after itself, a job used twice, a unique job", () => {
    const refused = (steps: Record<string, FlowStepInput>) => {
      try {
        planFlow({ steps });
      } catch (error) {
        expect(error).toMatchObject({ code: "FLOW_INVALID" });
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    expect(refused({})).toMatch(/no steps/);
    expect(refused({ a: { job: job(), after: ["b"] } })).toMatch(/runs after "b", which is not a step/);
    expect(refused({ a: { job: job(), after: ["c"] }, b: { job: job(), after: ["a"] }, c: { job: job(), after: ["b"] } })).toMatch(/cycle: (a|b|c) → .* → \1/);
    expect(refused({ a: { job: job(), after: ["a"] } })).toMatch(/after itself/);
    const shared = job();
    expect(refused({ a: shared, b: shared })).toMatch(/uses a job object another step uses/);
    expect(refused({ a: new Job({ task: "orders.step", unique: { key: "k" } }) })).toMatch(/unique job/);
    expect(refused({ "bad name!": job() })).toMatch(/not a name/);
    expect(refused({ a: { job: job(), after: "b" as unknown as string[] } })).toMatch(/after must be an array/);
    expect(refused({ a: "x" as unknown as Job })).toMatch(/is not a job/);
  });

  it("plans a chain of 10 000 steps without running out of stack", () => {
    const steps: Record<string, FlowStepInput> = { s0: job() };
    for (let i = 1; i < 10_000; i++) steps[`s${i}`] = { job: job(), after: [`s${i - 1}`] };
    const plan = planFlow({ steps });
    expect(plan.steps[0]!.name).toBe("s0");
    expect(plan.steps[9_999]!.name).toBe("s9999");
  });
});

describe("planBatch", () => {
  it("makes its jobs steps and its callbacks steps after all of them, onComplete running on failure", () => {
    const jobs = [job("a"), job("b")];
    const onComplete = job("done");
    const onSuccess = job("ok");
    const plan = planBatch(jobs, { onComplete, onSuccess });
    expect(plan.kind).toBe("batch");
    expect(onComplete.flow).toEqual({ id: plan.id, step: "onComplete", after: { 0: jobs[0]!.id, 1: jobs[1]!.id }, onParentFailure: "run", batch: true });
    expect(onSuccess.flow).toEqual({ id: plan.id, step: "onSuccess", after: { 0: jobs[0]!.id, 1: jobs[1]!.id }, batch: true });
    expect(() => planBatch([])).toThrow(/no jobs/);
  });
});
