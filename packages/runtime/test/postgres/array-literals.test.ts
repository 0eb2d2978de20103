import { describe, expect, it } from "vitest";
import { numberArray, textArray } from "../../src/backends/postgres/job-rows.js";
import { withAdmin } from "./pg-test-env.js";

/**
 * The enqueue sends each column as an array literal built by jfast, not by the driver. What PostgreSQL reads
 * back from it must be exactly the values given, whatever characters they hold.
 */
describe("postgres: array literals of the enqueue", () => {
  const awkward = [
    "plain",
    "",
    "NULL",
    "null",
    'has "double" quotes',
    "back\\slash and \\\" both",
    "{braces},commas,}",
    "  spaces  ",
    "new\nline\ttab",
    "ünïcødé ✓ 𝄞",
    "'single'",
    "\\",
    '"',
    null,
  ];

  it("reads back every text value unchanged, null as NULL", async () => {
    const rows = await withAdmin(async (c) => (await c.query<{ a: Array<string | null> }>("SELECT $1::text[] AS a", [textArray(awkward)])).rows);
    expect(rows[0]!.a).toEqual(awkward);
  });

  it("reads back JSON payloads as json, byte for byte", async () => {
    const payloads = [{ a: 'x"y', b: "c\\d", e: [1, "}{", null], f: "\u0000 nul escape" }, "just a string", 42, null, { nested: { "k\"ey": "v\\al" } }].map((p) =>
      JSON.stringify(p),
    );
    const rows = await withAdmin(async (c) => (await c.query<{ a: string[] }>("SELECT array(SELECT unnest($1::json[])::text) AS a", [textArray(payloads)])).rows);
    expect(rows[0]!.a).toEqual(payloads);
  });

  it("reads back numbers and NULL, empty arrays too", async () => {
    const numbers = [0, -1, 1732950000123, 2 ** 31 - 1, null, 3];
    const rows = await withAdmin(async (c) =>
      (await c.query<{ a: string[]; e: string[]; t: string[] }>("SELECT $1::float8[]::text[] AS a, $2::text[] AS e, $3::bigint[]::text[] AS t", [numberArray(numbers), textArray([]), numberArray([])])).rows,
    );
    expect(rows[0]!.a).toEqual(numbers.map((n) => (n === null ? null : String(n))));
    expect(rows[0]!.e).toEqual([]);
    expect(rows[0]!.t).toEqual([]);
  });

  it("reads back a sparse array's holes as NULL, fractions as they were", async () => {
    // An enqueue's leases are filled only for the jobs handed over to a worker: the others are holes.
    const leases: Array<number | null> = new Array<number | null>(4);
    leases[1] = 30_000;
    leases[3] = 0.25;
    const rows = await withAdmin(async (c) => (await c.query<{ a: Array<string | null> }>("SELECT $1::float8[]::text[] AS a", [numberArray(leases)])).rows);
    expect(rows[0]!.a).toEqual([null, "30000", null, "0.25"]);
  });
});
