// The runtime's tests once more on another Node.js: JFAST_TEST_NODE24 names its binary (.ci/run installs Node 24
// outside the workspace and sets it). `npm test` adds this task only when the variable is set, after the suite on
// the Node that runs npm (turbo.json: it depends on this package's `test`, so the two never share the loopback
// clusters at once).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const node = process.env.JFAST_TEST_NODE24;
if (!node) {
  console.error("test:node24: set JFAST_TEST_NODE24 to the path of a Node.js 24 binary (bash .ci/run installs one in .ci/node24)");
  process.exit(2);
}
const root = fileURLToPath(new URL("../../../", import.meta.url));
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
// Node 24 first on PATH too, so that child processes the tests start (workers, npx) run on it as well.
const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ""}` };
const version = spawn(node, ["--version"], { stdio: "inherit", env });
version.on("exit", () => {
  const child = spawn(node, [vitest, "run", ...process.argv.slice(2)], { stdio: "inherit", env, cwd: fileURLToPath(new URL("..", import.meta.url)) });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
});
