import { describe, expect, it } from "vitest";
import { checkContracts } from "./check.js";
import { parseContracts } from "./contracts-file.js";
import type { ModuleFacts } from "./types.js";

const invoice: ModuleFacts = {
  name: "invoice",
  files: ["modules/invoice/tasks.ts"],
  events: [],
  jobs: [
    { file: "modules/invoice/tasks.ts", line: 4, task: "shipment.create" },
    { file: "modules/invoice/tasks.ts", line: 5, task: "shipment.cancel" },
  ],
  tasks: [{ file: "modules/invoice/tasks.ts", line: 2, name: "invoice.send_email", session: false, schedule: null }],
  subscriptions: [],
  schedules: [],
  consumes: [],
  produces: [],
  unresolved: [],
};

describe("[services.<name>] tasks in contracts.toml", () => {
  it("makes another service's tasks known: enqueueing them is no unknown-task, enqueueing others still is", () => {
    const contracts = parseContracts("/srv/contracts.toml", `[modules.invoice]\n\n[services.shipping]\ntasks = ["shipment.create"]\n`);
    expect(contracts.services).toEqual({ shipping: { tasks: ["shipment.create"], description: null } });
    const { findings } = checkContracts({ contracts, modules: [invoice] });
    expect(findings.map(({ finding }) => `${finding.rule} ${finding.subject}`)).toEqual(["unknown-task shipment.cancel"]);
  });

  it("refuses a malformed table, naming it", () => {
    expect(() => parseContracts("/srv/contracts.toml", `[services.shipping]\ntask = ["shipment.create"]\n`)).toThrow(
      "[services.shipping]: unknown key task (a service takes tasks and description)",
    );
  });
});
