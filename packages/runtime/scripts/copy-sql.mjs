// Copies every .sql file (and the Redis backend's .lua scripts) under src/ to the same place under dist/:
// they are read from disk next to the compiled module that uses them (new URL("./sql/x.sql", import.meta.url)).
import { cp, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const src = path.join(root, "src");
const dist = path.join(root, "dist");

let copied = 0;
for (const entry of await readdir(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !(entry.name.endsWith(".sql") || entry.name.endsWith(".lua"))) continue;
  const from = path.join(entry.parentPath ?? entry.path, entry.name);
  const to = path.join(dist, path.relative(src, from));
  await cp(from, to);
  copied++;
}
console.log(`copied ${copied} .sql/.lua file(s) to dist/`);
