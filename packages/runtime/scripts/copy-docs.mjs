// Copies the repository's docs/*.md into the package's docs/, so an installed @jfast/runtime carries the
// pages its errors and `jfast docs <topic>` name. Screenshots stay in the repository.
import { cp, mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const from = path.join(root, "..", "..", "docs");
const to = path.join(root, "docs");

await rm(to, { recursive: true, force: true });
await mkdir(to, { recursive: true });
let copied = 0;
for (const name of await readdir(from)) {
  if (!name.endsWith(".md")) continue;
  await cp(path.join(from, name), path.join(to, name));
  copied++;
}
console.log(`copied ${copied} docs page(s) to docs/`);
