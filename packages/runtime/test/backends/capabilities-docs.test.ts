import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { capabilities as memory } from "../../src/backends/memory/capabilities.js";
import { capabilities as postgres } from "../../src/backends/postgres/capabilities.js";
import { rabbitmqCapabilities } from "../../src/backends/rabbitmq/capabilities.js";
import { capabilities as redis } from "../../src/backends/redis/capabilities.js";
import { ListState, type BackendCapabilities } from "../../src/core/queue-backend.js";

const PAGE = new URL("../../../../docs/backends.md", import.meta.url);

const COLUMNS: Array<[string, BackendCapabilities]> = [
  ["memory", memory],
  ["postgres", postgres],
  ["redis", redis],
  ["rabbitmq", rabbitmqCapabilities({ cancellations: false, uniqueKeys: false, limits: false, quorum: false })],
  ["rabbitmq + database", rabbitmqCapabilities({ cancellations: true, uniqueKeys: true, limits: true, flows: true, workers: true, quorum: false })],
];

/** A capability's value as the table writes it. */
function cell(value: BackendCapabilities[keyof BackendCapabilities]): string {
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") return value;
  const all = Object.values(ListState);
  if (all.every((state) => value.includes(state))) return "all";
  const missing = all.filter((state) => !value.includes(state));
  if (missing.length === 1) return `all but ${missing[0]}`;
  return missing.length === 2 ? `all but ${missing[0]} and ${missing[1]}` : value.join(", ");
}

describe("docs/backends.md#capabilities", () => {
  it("lists every capability of every backend as the backends' own objects say", async () => {
    const text = await readFile(PAGE, "utf8");
    const header = text.split("\n").find((line) => line.startsWith("| Capability |"))!;
    expect(header.split("|").slice(3, -1).map((c) => c.trim())).toEqual(COLUMNS.map(([name]) => name));
    const rows = new Map(
      text
        .split("\n")
        .filter((line) => /^\| `\w+` \|/.test(line))
        .map((line) => {
          const cells = line.split("|").slice(1, -1).map((c) => c.trim());
          return [cells[0]!.replaceAll("`", ""), cells.slice(2)] as const;
        }),
    );
    expect([...rows.keys()].sort()).toEqual(Object.keys(memory).sort());
    for (const [key, documented] of rows) {
      const actual = COLUMNS.map(([, capabilities]) => cell(capabilities[key as keyof BackendCapabilities]));
      expect(documented, key).toEqual(actual);
    }
  });
});
