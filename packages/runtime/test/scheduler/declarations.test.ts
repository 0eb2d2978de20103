import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { createLogger } from "../../src/observability/logger.js";
import type { Scheduler } from "../../src/scheduler/scheduler.js";

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");
const silent = createLogger({ service: "report", level: "silent" });
const roots: string[] = [];

afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function serviceWith(tasksFile: string): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-schedules-"));
  roots.push(root);
  await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "report"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "memory"\nscheduler = true\n`);
  await mkdir(path.join(root, "modules/report"), { recursive: true });
  await writeFile(path.join(root, "modules/report/tasks.ts"), tasksFile);
  return root;
}

const imports = `import { task } from ${JSON.stringify(path.join(SRC, "core/define-task.ts"))};
import { schedule } from ${JSON.stringify(path.join(SRC, "scheduler/declare-schedule.ts"))};
`;

describe("schedules declared in a module's tasks file", () => {
  it("come from task options and from schedule(), in every app built from the module", async () => {
    const root = await serviceWith(`${imports}
export const nightly = task("report.nightly", { cron: "0 3 * * *", timezone: "America/Mexico_City" }, async () => {});
export const send = task("report.send", async () => {});
export const weekly = schedule("report.send", { cron: "0 8 * * mon", name: "report-weekly", payload: { span: "week" } });
`);
    for (let i = 0; i < 2; i++) {
      const app = await createJfast({ root, logger: silent });
      await app.start();
      try {
        const status = app.require<Scheduler>("scheduler").status();
        expect(status).toMatchObject({ status: "ok", running: true, store: "memory" });
        expect(status.schedules.map((s) => [s.name, s.task, s.cron, s.timezone])).toEqual([
          ["report.nightly", "report.nightly", "0 3 * * *", "America/Mexico_City"],
          ["report-weekly", "report.send", "0 8 * * mon", "UTC"],
        ]);
        expect(status.schedules.every((s) => s.nextTick !== null && Date.parse(s.nextTick) > Date.now())).toBe(true);
      } finally {
        await app.stop();
      }
    }
  });

  it("stop the import when the cron is invalid, with the parser's message", async () => {
    const root = await serviceWith(`${imports}
export const send = task("report.send", async () => {});
export const broken = schedule("report.send", { cron: "0 8 * * 1#2", name: "report-second-monday" });
`);
    await expect(createJfast({ root, logger: silent })).rejects.toMatchObject({ code: "CRON_INVALID", message: expect.stringContaining('Quartz "#"') });
  });

  it("refuse two schedules under one name", async () => {
    const root = await serviceWith(`${imports}
export const send = task("report.send", { every: { hours: 1 } }, async () => {});
export const again = schedule("report.send", { cron: "0 8 * * *" });
`);
    await expect(createJfast({ root, logger: silent })).rejects.toMatchObject({ code: "SCHEDULE_DUPLICATE" });
  });
});
