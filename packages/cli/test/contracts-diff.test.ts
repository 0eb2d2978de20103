import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { inspectContracts, type ContractsDiff } from "@jfast/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { inspectContractsAtRef } from "../src/commands/contracts-at-ref.js";
import { main } from "../src/main.js";
import { REPO_ROOT, runJfast } from "./jfast-process.js";

const CONTRACTS = `[modules.receipt]
publishes = ["receipt.registered"]

[modules.alert]
`;
const RECEIPT = `import { Event } from "@jfast/runtime";

export function registered(id: string) {
  return new Event({ type: "receipt.registered", data: { id } });
}
`;
const subscriber = (type: string, name = "checkBudget") => `import { subscribe } from "@jfast/runtime";

export const ${name} = subscribe("${type}", async () => {});
`;
const SERVICE = {
  "jfast.toml": `[service]\nname = "shop"\n`,
  "contracts.toml": CONTRACTS,
  "modules/receipt/register.ts": RECEIPT,
  "modules/alert/tasks.ts": subscriber("receipt.registered"),
};
const FINDING_KEYS = ["file", "fix", "line", "message", "module", "rule", "subject"];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A real repository in a temp directory; `service` is where the service lives inside it. */
async function repository(service = "."): Promise<{ dir: string; root: string; write(files: Record<string, string | null>): Promise<void>; git(...args: string[]): string; commit(message: string): void }> {
  const dir = await mkdtemp(path.join(tmpdir(), "jfast-contracts-diff-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const root = path.join(dir, service);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=jfast", "-c", "user.email=jfast@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir, encoding: "utf8" });
  git("init", "-q", "-b", "main");
  return {
    dir,
    root,
    git,
    async write(files) {
      for (const [file, text] of Object.entries(files)) {
        const full = path.join(root, file);
        if (text === null) await rm(full, { recursive: true, force: true });
        else {
          await mkdir(path.dirname(full), { recursive: true });
          await writeFile(full, text);
        }
      }
    },
    commit(message) {
      git("add", "-A");
      git("commit", "-q", "-m", message);
    },
  };
}

async function jfast(args: string[], cwd = REPO_ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { out: (t) => void (stdout += t), err: (t) => void (stderr += t), cwd });
  return { code, stdout, stderr };
}

async function diffJson(root: string, base = "HEAD") {
  const result = await jfast(["contracts", "diff", "--base", base, "--json", "--root", root]);
  return { code: result.code, stderr: result.stderr, diff: JSON.parse(result.stdout || "null") as ContractsDiff };
}

describe("jfast contracts diff", () => {
  it("reads the example service at a commit exactly as it reads it on disk", async () => {
    const repo = await repository("apps/example");
    for (const entry of ["jfast.toml", "contracts.toml", "modules"]) {
      await cp(path.join(REPO_ROOT, "apps/example", entry), path.join(repo.root, entry), { recursive: true });
    }
    repo.commit("the example service");
    const atCommit = await inspectContractsAtRef({ root: repo.root, ref: "HEAD" });
    const onDisk = await inspectContracts(repo.root);
    expect(atCommit.modules.map((m) => m.files)).toEqual(onDisk.modules.map((m) => m.files));
    expect(atCommit.modules.flatMap((m) => m.files)).not.toContain("modules/receipt/extract-total.test.ts");
    expect(atCommit.graph).toEqual(onDisk.graph);
    expect(atCommit.findings).toEqual(onDisk.findings);
    expect(atCommit.graph.edges.length).toBeGreaterThan(0);
    const diff = await jfast(["contracts", "diff", "--base", "HEAD", "--root", repo.root]);
    expect(diff).toEqual({ code: 0, stdout: "no contract changes against HEAD\n", stderr: "" });
  });


  it("an added subscriber in the working tree: one subscribes edge, exit 0, and nothing in the repository moves", async () => {
    const repo = await repository();
    await repo.write(SERVICE);
    repo.commit("service");
    await repo.write({ "modules/invoice/tasks.ts": subscriber("receipt.registered", "draft") });
    const statusBefore = repo.git("status", "--porcelain");

    const { code, diff } = await diffJson(repo.root);
    expect(code).toBe(0);
    expect(diff).toEqual({ added: [{ kind: "subscribes", from: "receipt.registered", to: "invoice" }], removed: [], newViolations: [], fixedViolations: [] });
    expect(repo.git("status", "--porcelain")).toBe(statusBefore);

    const text = await runJfast(["contracts", "diff", "--base", "main"], { cwd: repo.root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe("+ subscribes  receipt.registered → invoice\n\n1 edge added, 0 removed, 0 new violations, 0 fixed against main\n");
  });

  it("a renamed module, committed: its edges are removed under the old name and added under the new one", async () => {
    const repo = await repository();
    await repo.write(SERVICE);
    repo.commit("service");
    repo.git("mv", "modules/alert", "modules/notify");
    await repo.write({ "contracts.toml": CONTRACTS.replace("[modules.alert]", "[modules.notify]") });
    repo.commit("rename alert to notify");

    const { code, diff } = await diffJson(repo.root, "HEAD~1");
    expect(code).toBe(0);
    expect(diff.added).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "notify" }]);
    expect(diff.removed).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "alert" }]);
    expect(diff.newViolations).toEqual([]);
    expect(diff.fixedViolations).toEqual([]);
  });

  it("a deleted subscriber is a removed edge and no violation", async () => {
    const repo = await repository();
    await repo.write(SERVICE);
    repo.commit("service");
    await repo.write({ "modules/alert/tasks.ts": null });

    const { code, diff } = await diffJson(repo.root);
    expect(code).toBe(0);
    expect(diff).toEqual({ added: [], removed: [{ kind: "subscribes", from: "receipt.registered", to: "alert" }], newViolations: [], fixedViolations: [] });
    const text = await jfast(["contracts", "diff", "--base", "HEAD", "--root", repo.root]);
    expect(text.stdout).toContain("- subscribes  receipt.registered → alert\n");
  });

  it("a new violation exits 1 and is exactly what jfast contracts check --json reports for it", async () => {
    const repo = await repository();
    await repo.write(SERVICE);
    repo.commit("service");
    await repo.write({ "modules/invoice/tasks.ts": `\n${subscriber("receipt.registred", "draft")}` });

    const { code, diff } = await diffJson(repo.root);
    expect(code).toBe(1);
    expect(diff.added).toEqual([{ kind: "subscribes", from: "receipt.registred", to: "invoice" }]);
    expect(diff.newViolations).toHaveLength(1);
    const [finding] = diff.newViolations;
    expect(Object.keys(finding!).sort()).toEqual(FINDING_KEYS);
    expect(finding).toMatchObject({ rule: "orphan-subscription", module: "invoice", subject: "receipt.registred", file: "modules/invoice/tasks.ts", line: 4 });
    const check = await jfast(["contracts", "check", "--json", "--root", repo.root]);
    expect(JSON.parse(check.stdout)).toEqual([finding]);

    const text = await jfast(["contracts", "diff", "--base", "HEAD", "--root", repo.root]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("new violation  modules/invoice/tasks.ts:4  orphan-subscription  [invoice] receipt.registred\n");
    expect(text.stdout).toContain('  fix: did you mean "receipt.registered"?');
  });

  it("a fixed violation exits 0 and is listed as fixed, with the finding as it was at the base", async () => {
    const repo = await repository();
    await repo.write({ ...SERVICE, "contracts.toml": "[modules.alert]\n" });
    repo.commit("receipt.registered is not declared");
    await repo.write({ "contracts.toml": CONTRACTS });

    const { code, diff } = await diffJson(repo.root);
    expect(code).toBe(0);
    expect(diff.added).toEqual([]);
    expect(diff.newViolations).toEqual([]);
    expect(diff.fixedViolations.map((f) => [f.rule, f.module, f.subject]).sort()).toEqual([
      ["orphan-subscription", "alert", "receipt.registered"],
      ["undeclared-event", "receipt", "receipt.registered"],
    ]);
    for (const f of diff.fixedViolations) expect(Object.keys(f).sort()).toEqual(FINDING_KEYS);
  });

  it("exit 2 with the reason when contracts.toml is broken at the base or in the working tree", async () => {
    const repo = await repository();
    await repo.write({ ...SERVICE, "contracts.toml": "[modules.receipt\npublishes = [" });
    repo.commit("broken");
    await repo.write({ "contracts.toml": CONTRACTS });

    const atBase = await runJfast(["contracts", "diff", "--base", "HEAD", "--json", "--root", repo.root]);
    expect(atBase.code).toBe(2);
    expect(atBase.stdout).toBe("");
    expect(atBase.stderr).toContain("HEAD:contracts.toml is not valid TOML");

    repo.commit("fixed");
    await repo.write({ "contracts.toml": `[modules.receipt]\npublish = ["receipt.registered"]\n` });
    const inTree = await jfast(["contracts", "diff", "--base", "HEAD", "--root", repo.root]);
    expect(inTree.code).toBe(2);
    expect(inTree.stderr).toContain("[modules.receipt]: unknown key publish");
    expect(inTree.stderr).toContain(path.join(repo.root, "contracts.toml"));
  });

  it("--md is a pull-request comment with the changed edges, the new violation and a mermaid block", async () => {
    const repo = await repository();
    await repo.write(SERVICE);
    repo.commit("service");
    await repo.write({
      "modules/invoice/tasks.ts": subscriber("receipt.registered", "draft"),
      "modules/alert/tasks.ts": subscriber("receipt.registred"),
    });

    const result = await jfast(["contracts", "diff", "--base", "main", "--md", "--root", repo.root]);
    expect(result.code).toBe(1);
    const md = result.stdout;
    expect(md.split("\n").slice(0, 2)).toEqual(["<!-- jfast contracts diff -->", "## Contract changes"]);
    expect(md).toContain("This change adds 1 contract violation (compared with `main`)");
    expect(md).toContain("| added | subscribes | `receipt.registered` | `invoice` |");
    expect(md).toContain("| removed | subscribes | `receipt.registered` | `alert` |");
    expect(md).toContain("- **orphan-subscription** in `alert`, `receipt.registred` (`modules/alert/tasks.ts:3`)");
    const mermaid = /```mermaid\n([\s\S]*?)\n```/.exec(md)?.[1];
    expect(mermaid).toBeDefined();
    expect(mermaid).toMatch(/^flowchart LR\n/);
    expect(mermaid).toMatch(/==>\|added\|/);
    expect(mermaid).toMatch(/==>\|added, orphan-subscription\|/);
    expect(mermaid).toMatch(/-\.->\|removed\|/);
    expect(mermaid).toMatch(/linkStyle \d+ stroke:#cf222e/);
  });

  it("a service in a subdirectory of the repository, new since the base: everything it has is added", async () => {
    const repo = await repository("apps/shop");
    await repo.write({ "README.md": "a repository\n" });
    repo.commit("empty");
    await repo.write(SERVICE);
    repo.commit("shop");

    const { code, diff } = await diffJson(repo.root, "HEAD~1");
    expect(code).toBe(0);
    expect(diff.added).toEqual([
      { kind: "publishes", from: "receipt", to: "receipt.registered" },
      { kind: "subscribes", from: "receipt.registered", to: "alert" },
    ]);
    expect((await diffJson(repo.root, "HEAD")).diff.added).toEqual([]);
    const fromInside = await jfast(["contracts", "diff", "--base", "HEAD~1"], repo.root);
    expect(fromInside.stdout).toContain("2 edges added, 0 removed, 0 new violations, 0 fixed against HEAD~1");
  });

  it("no change prints one line and exits 0; an unknown ref, no repository or a missing --base exits 2", async () => {
    const repo = await repository();
    await repo.write(SERVICE);
    repo.commit("service");
    const same = await jfast(["contracts", "diff", "--base", "HEAD", "--root", repo.root]);
    expect(same).toEqual({ code: 0, stdout: "no contract changes against HEAD\n", stderr: "" });

    const unknown = await jfast(["contracts", "diff", "--base", "origin/nope", "--root", repo.root]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('git does not know the commit "origin/nope"');
    const outside = await mkdtemp(path.join(tmpdir(), "jfast-contracts-diff-no-git-"));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await writeFile(path.join(outside, "jfast.toml"), SERVICE["jfast.toml"]);
    const noRepository = await jfast(["contracts", "diff", "--base", "main", "--root", outside]);
    expect(noRepository.code).toBe(2);
    expect(noRepository.stderr).toContain(`${outside} is not inside a git repository`);
    const missing = await jfast(["contracts", "diff", "--root", repo.root]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--base needs a git ref");
  });
});

describe("jfast workspace contracts diff", () => {
  it("diffs every service of the workspace: one report, exit 1 when any service gains a violation, 2 when one is broken", async () => {
    const repo = await repository();
    const inService = (dir: string, files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([f, t]) => [`${dir}/${f}`, t]));
    await repo.write({
      "package.json": JSON.stringify({ name: "shop-workspace", private: true, workspaces: ["apps/*"] }),
      ...inService("apps/orders", { ...SERVICE, "jfast.toml": `[service]\nname = "orders"\nbase_port = 4100\n` }),
      ...inService("apps/billing", { ...SERVICE, "jfast.toml": `[service]\nname = "billing"\nbase_port = 4200\n` }),
    });
    repo.commit("two services");
    await repo.write({ "apps/orders/modules/alert/tasks.ts": subscriber("receipt.registred") });

    const json = await jfast(["workspace", "contracts", "diff", "--base", "main", "--json", "--root", repo.dir]);
    expect(json.code, json.stderr).toBe(1);
    const { services } = JSON.parse(json.stdout) as { services: Array<ContractsDiff & { service: string; dir: string }> };
    expect(services.map((s) => [s.service, s.dir])).toEqual([
      ["billing", "apps/billing"],
      ["orders", "apps/orders"],
    ]);
    expect(services[0]).toMatchObject({ added: [], removed: [], newViolations: [], fixedViolations: [] });
    expect(services[1]!.removed).toEqual([{ kind: "subscribes", from: "receipt.registered", to: "alert" }]);
    expect(services[1]!.newViolations.map((f) => [f.rule, f.file])).toEqual([["orphan-subscription", "modules/alert/tasks.ts"]]);

    const md = await jfast(["workspace", "contracts", "diff", "--base", "main", "--md"], repo.dir);
    expect(md.code).toBe(1);
    expect(md.stdout).toContain("### billing\n\nNo contract changes.");
    expect(md.stdout).toContain("### orders\n\n**1 edge added, 1 removed, 1 new violation, 0 fixed**");
    expect(md.stdout.match(/```mermaid/g)).toHaveLength(1);

    const text = await jfast(["workspace", "contracts", "diff", "--base", "main", "--root", repo.dir]);
    expect(text.stdout.split("\n").slice(0, 6)).toEqual([
      "billing: no contract changes against main",
      "",
      "orders",
      "+ subscribes  receipt.registred → alert",
      "- subscribes  receipt.registered → alert",
      "",
    ]);
    expect(text.stdout).toContain("orders: 1 edge added, 1 removed, 1 new violation, 0 fixed against main\n");

    await repo.write({ "apps/billing/contracts.toml": "[modules.receipt]\npublishes = 3\n" });
    const broken = await jfast(["workspace", "contracts", "diff", "--base", "main", "--json", "--root", repo.dir]);
    expect(broken.code).toBe(2);
    expect(broken.stdout).toBe("");
    expect(broken.stderr).toContain(path.join(repo.dir, "apps/billing/contracts.toml"));
  });
});
