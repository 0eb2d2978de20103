import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const PACKAGE = path.resolve(import.meta.dirname, "../..");
const ENTRY_POINTS = ["dist/index.d.ts", "dist/testing.d.ts", "dist/admin.d.ts"];

describe("the published types", () => {
  it("hold every compile error public-surface.types.ts expects (a typo in a provider, a wrong payload field, ...)", { timeout: 120_000 }, async () => {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const run = promisify(execFile)(process.execPath, [tsc, "-p", path.join(import.meta.dirname, "tsconfig.json")], { cwd: PACKAGE });
    const output = await run.then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(output.trim()).toBe("");
  });

  it("say `any` nowhere a service can reach from the package's entry points", () => {
    expect(anyIn(ENTRY_POINTS.map((entry) => path.join(PACKAGE, entry)))).toEqual([]);
  });
});

/** `any` keywords (comments aside) in the declaration files the entry points import, transitively. */
function anyIn(entries: string[]): string[] {
  const seen = new Set<string>();
  const pending = [...entries];
  const found: string[] = [];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    expect(existsSync(file), `${file} (run the build first)`).toBe(true);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const follow = (specifier: string) => {
      if (specifier.startsWith(".")) pending.push(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".d.ts")));
    };
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.AnyKeyword) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${path.relative(PACKAGE, file)}:${line + 1}: ${source.text.split("\n")[line]!.trim()}`);
      }
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        follow(node.moduleSpecifier.text);
      }
      if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        follow(node.argument.literal.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}
