import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ContractsDiff } from "@jfast/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT, runJfast } from "./jfast-process.js";

// `jfast contracts diff --base <ref>` comparing the payload schemas of a service's tasks (zod and valibot) between
// a commit and the working tree, in a real git repository whose service imports the workspace's packages.

const TASKS = (charge: string, send: string) => `import { task } from "@jfast/runtime";
import * as v from "valibot";
import { z } from "zod";

export const charge = task("orders.charge", { schema: ${charge} }, async () => undefined);
export const send = task("orders.send", { schema: ${send} }, async () => undefined);
`;
const BEFORE = TASKS(
  `z.object({ order_id: z.number(), card: z.string().optional(), note: z.string(), currency: z.enum(["EUR", "USD"]) })`,
  `v.object({ to: v.string(), cc: v.optional(v.string()) })`,
);
const AFTER = TASKS(
  // card now required, note removed, currency narrowed, coupon new and optional
  `z.object({ order_id: z.number(), card: z.string(), currency: z.enum(["EUR"]), coupon: z.string().optional() })`,
  // a new optional field only: compatible
  `v.object({ to: v.string(), cc: v.optional(v.string()), bcc: v.optional(v.string()) })`,
);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function service(tasks: string) {
  const dir = await mkdtemp(path.join(tmpdir(), "jfast-payload-diff-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=jfast", "-c", "user.email=jfast@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir, encoding: "utf8" });
  git("init", "-q", "-b", "main");
  await symlink(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  await mkdir(path.join(dir, "modules", "orders"), { recursive: true });
  await writeFile(path.join(dir, ".gitignore"), "node_modules\n.jfast\n");
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "shop", private: true, type: "module" }));
  await writeFile(path.join(dir, "jfast.toml"), `[service]\nname = "shop"\n`);
  await writeFile(path.join(dir, "modules", "orders", "tasks.ts"), tasks);
  git("add", "-A");
  git("commit", "-q", "-m", "base");
  return { dir, write: (text: string) => writeFile(path.join(dir, "modules", "orders", "tasks.ts"), text) };
}

describe("jfast contracts diff: payload schemas", () => {
  it("classes each task's payload schema change breaking or compatible, in --json, the text and --md, and exits 1 on a breaking one", { timeout: 120_000 }, async () => {
    const { dir, write } = await service(BEFORE);
    const unchanged = await runJfast(["contracts", "diff", "--base", "HEAD", "--json", "--root", dir]);
    expect(unchanged.code, unchanged.stderr).toBe(0);
    expect((JSON.parse(unchanged.stdout) as ContractsDiff).payloads).toBeUndefined();

    await write(AFTER);
    const json = await runJfast(["contracts", "diff", "--base", "HEAD", "--json", "--root", dir]);
    expect(json.code, json.stderr).toBe(1);
    const diff = JSON.parse(json.stdout) as ContractsDiff;
    expect(diff.payloadsNotCompared).toBeUndefined();
    const charge = diff.payloads!.find((p) => p.name === "orders.charge")!;
    expect(charge).toMatchObject({ kind: "task", change: "changed", class: "breaking" });
    expect(charge.fields).toEqual(
      expect.arrayContaining([
        { path: "note", change: "field removed", breaking: true },
        { path: "card", change: "now required", breaking: true },
        { path: "currency", change: 'no longer accepts "USD"', breaking: true },
        { path: "coupon", change: "new optional field", breaking: false },
      ]),
    );
    expect(charge.fields).toHaveLength(4);
    const send = diff.payloads!.find((p) => p.name === "orders.send")!;
    expect(send).toEqual({ kind: "task", name: "orders.send", change: "changed", class: "compatible", fields: [{ path: "bcc", change: "new optional field", breaking: false }] });

    const text = await runJfast(["contracts", "diff", "--base", "HEAD", "--root", dir]);
    expect(text.stdout).toContain("payload breaking    task orders.charge (changed)");
    expect(text.stdout).toContain("  ! card: now required");
    expect(text.stdout).toContain("2 payload schemas changed (1 breaking)");

    const md = await runJfast(["contracts", "diff", "--base", "HEAD", "--md", "--root", dir]);
    expect(md.stdout).toContain(":warning: 1 payload schema changed in a breaking way");
    expect(md.stdout).toContain("| :warning: breaking | task `orders.charge` | `card` | now required |");
    expect(md.stdout).toContain("| compatible | task `orders.send` | `bcc` | new optional field |");
  });

  it("still compares the contracts when a side's tasks file cannot be imported, and says why the schemas were not", { timeout: 120_000 }, async () => {
    const { dir, write } = await service(BEFORE);
    await write(`import { task } from "@jfast/runtime";\nimport { schema } from "./nowhere.js";\nexport const charge = task("orders.charge", { schema }, async () => undefined);\n`);
    const json = await runJfast(["contracts", "diff", "--base", "HEAD", "--json", "--root", dir]);
    expect(json.code, json.stderr).toBe(0);
    const diff = JSON.parse(json.stdout) as ContractsDiff;
    expect(diff.payloads).toBeUndefined();
    expect(diff.payloadsNotCompared).toMatch(/modules\/orders: .*failed to import/);
  });
});
