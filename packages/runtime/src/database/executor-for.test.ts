import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { toDrizzleSql } from "./executor-for.js";

const dialect = new PgDialect();
const render = (text: string, params: unknown[]) => dialect.sqlToQuery(toDrizzleSql(text, params));

describe("toDrizzleSql", () => {
  it("turns $n placeholders into parameters in order, repeating a reused one", () => {
    expect(render("SELECT $2::int AS b, $1 AS a, $2 AS again", ["x", 2])).toMatchObject({
      sql: "SELECT $1::int AS b, $2 AS a, $3 AS again",
      params: [2, "x", 2],
    });
  });

  it("keeps an array as one parameter", () => {
    expect(render("SELECT * FROM t WHERE id = ANY($1::text[])", [["a", "b"]]).params).toEqual([["a", "b"]]);
  });

  it("leaves $n and -- alone inside literals, quoted identifiers and dollar quotes; drops comments", () => {
    const text = [
      "-- header: $1 queue",
      "SELECT '$1 -- not a comment', 'it''s $2', \"col$1\", $$ body $1 $$, $tag$ $2 $tag$, /* $1 */ $1 AS v",
    ].join("\n");
    const { sql, params } = render(text, ["value"]);
    expect(sql).toBe("\nSELECT '$1 -- not a comment', 'it''s $2', \"col$1\", $$ body $1 $$, $tag$ $2 $tag$,   $1 AS v");
    expect(params).toEqual(["value"]);
  });

  it("refuses a placeholder without a parameter", () => {
    expect(() => toDrizzleSql("SELECT $2", ["only one"])).toThrow(/\$2 but has 1 parameter/);
  });
});
