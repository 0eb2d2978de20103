import * as ts from "typescript";
import { describe, expect, it } from "vitest";
import { scanSource } from "./scan-source.js";

const scan = (text: string, file = "modules/m/tasks.ts") => scanSource(ts, file, text);

describe("scanSource", () => {
  it("finds events, jobs, tasks and subscribers with their lines", () => {
    const facts = scan(
      [
        `import { Event, Job, subscribe, task } from "@jfast/runtime";`,
        `export const a = task("m.a", { session: true, every: { minutes: 5 } }, async () => {});`,
        `export const onIt = subscribe("x.happened", { session: true }, async () => {});`,
        `new Event({ type: "m.done", data: {} });`,
        `new Job({ task: "other.do", payload: {} });`,
      ].join("\n"),
    );
    expect(facts.tasks).toEqual([{ name: "m.a", session: true, schedule: "every { minutes: 5 }", line: 2 }]);
    expect(facts.subscriptions).toEqual([{ type: "x.happened", exportName: "onIt", explicitName: null, session: true, line: 3 }]);
    expect(facts.events).toEqual([{ type: "m.done", line: 4 }]);
    expect(facts.jobs).toEqual([{ task: "other.do", line: 5 }]);
    expect(facts.unresolved).toEqual([]);
  });

  it("follows import aliases, namespace imports, const strings, const objects and shorthand properties", () => {
    const facts = scan(
      [
        `import { Event as DomainEvent, subscribe as on } from "@jfast/runtime";`,
        `import * as jf from "@jfast/runtime";`,
        `const TYPES = { paid: "m.paid" } as const;`,
        `const type = "m.shorthand";`,
        `const TASK = "other.do" satisfies string;`,
        `new DomainEvent({ type: TYPES.paid });`,
        `new jf.Event({ type });`,
        `new jf.Job({ task: TASK });`,
        `const handler = on("m.paid", { name: "pinned" }, async () => {});`,
        `export { handler as renamed };`,
      ].join("\n"),
    );
    expect(facts.events.map((e) => e.type)).toEqual(["m.paid", "m.shorthand"]);
    expect(facts.jobs.map((j) => j.task)).toEqual(["other.do"]);
    expect(facts.subscriptions).toEqual([{ type: "m.paid", exportName: "renamed", explicitName: "pinned", session: false, line: 9 }]);
  });

  it("leaves alone what is not jfast's: the DOM Event, a local class Event, someone else's .task()", () => {
    const facts = scan(
      [
        `new Event("click");`,
        `class Job { constructor(readonly init: unknown) {} }`,
        `new Job({ task: "not.ours" });`,
        `declare const gulp: { task(name: string, fn: () => void): void };`,
        `gulp.task("build", () => {});`,
      ].join("\n"),
    );
    expect(facts).toEqual({ events: [], jobs: [], tasks: [], subscriptions: [], schedules: [], consumes: [], produces: [], unresolved: [] });
  });

  it("reports what it cannot resolve instead of guessing", () => {
    const facts = scan(
      [
        `import { Event, Job, subscribe } from "@jfast/runtime";`,
        `import { TYPE } from "./types.js";`,
        `declare const init: { type: string };`,
        `let mutable = "m.changes";`,
        `new Event({ type: TYPE });`,
        `new Event(init);`,
        `new Job({ task: mutable });`,
        `subscribe(TYPE, async () => {});`,
      ].join("\n"),
    );
    expect(facts.events).toEqual([]);
    expect(facts.unresolved.map((u) => [u.kind, u.line])).toEqual([
      ["event", 5],
      ["event", 6],
      ["job", 7],
      ["subscribe", 8],
    ]);
  });

  it("names no export for an unexported or default-exported subscriber", () => {
    const facts = scan(
      [
        `import { subscribe } from "@jfast/runtime";`,
        `const hidden = subscribe("m.a", async () => {});`,
        `export default subscribe("m.b", async () => {});`,
      ].join("\n"),
    );
    expect(facts.subscriptions.map((s) => s.exportName)).toEqual([null, null]);
  });

  it("reads JavaScript modules and the registry forms of task and schedule", () => {
    const facts = scan(
      [
        `export function register(tasks) {`,
        `  tasks.task("m.nightly", { cron: "0 3 * * *", timezone: "UTC" }, async () => {});`,
        `  tasks.schedule("m.nightly", { cron: "@hourly", name: "m-hourly" });`,
        `  tasks.schedule(() => {});`,
        `}`,
      ].join("\n"),
      "modules/m/tasks.mjs",
    );
    expect(facts.tasks).toEqual([{ name: "m.nightly", session: false, schedule: 'cron "0 3 * * *" in "UTC"', line: 2 }]);
    expect(facts.schedules).toEqual([{ task: "m.nightly", schedule: 'cron "@hourly"', name: "m-hourly", line: 3 }]);
  });
});

describe("scanSource: Kafka", () => {
  it("finds handlers with the types their body tells apart, and publishes with the event built in place or in a const", () => {
    const facts = scan(
      [
        `import { Event, on } from "@jfast/runtime";`,
        `const TOPIC = "invoices";`,
        `export const a = on(TOPIC, async (event) => { if (event.type !== "invoice.paid") return; });`,
        `export const b = on("parcels", async (e) => { switch (e.type) { case "parcel.sent": case "parcel.lost": break; } });`,
        `export const c = on("audit", async () => {});`,
        `await ctx.require("events").publish("shipments", new Event({ type: "shipment.created", data: {} }));`,
        `const paid = new Event({ type: "invoice.paid", data: {} });`,
        `await outbox.publish(tx, TOPIC, paid);`,
        `await outbox.publish(tx, TOPIC, somethingElse);`,
        `await redis.publish("channel", "message");`,
        `await ctx.require("events").publish(topicOf(tenant), paid);`,
      ].join("\n"),
    );
    expect(facts.consumes).toEqual([
      { topic: "invoices", types: ["invoice.paid"], line: 3 },
      { topic: "parcels", types: ["parcel.lost", "parcel.sent"], line: 4 },
      { topic: "audit", types: null, line: 5 },
    ]);
    expect(facts.produces).toEqual([
      { topic: "shipments", type: "shipment.created", line: 6 },
      { topic: "invoices", type: "invoice.paid", line: 8 },
      { topic: "invoices", type: null, line: 9 },
    ]);
    expect(facts.unresolved).toEqual([{ kind: "topic", text: `ctx.require("events").publish(topicOf(tenant), paid)`, line: 11 }]);
  });
});
