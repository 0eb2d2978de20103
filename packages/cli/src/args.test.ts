import { describe, expect, it } from "vitest";
import { parseArgs } from "./args.js";
import type { FlagSpecs } from "./command.js";
import { UsageError } from "./errors.js";

const flags = {
  concurrency: { type: "integer", min: 1, placeholder: "N", description: "" },
  grace: { type: "number", min: 0, default: 25, description: "" },
  worker: { type: "boolean", negatable: true, default: true, description: "" },
  json: { type: "boolean", description: "" },
  root: { type: "string", placeholder: "DIR", description: "" },
  help: { type: "boolean", short: "h", description: "" },
} satisfies FlagSpecs;

function usageMessage(argv: string[]): string {
  try {
    parseArgs(argv, flags);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a usage error");
}

describe("parseArgs", () => {
  it("fills defaults and reads both --flag value and --flag=value", () => {
    expect(parseArgs([], flags).flags).toEqual({ concurrency: undefined, grace: 25, worker: true, json: false, root: undefined, help: false });
    const parsed = parseArgs(["--concurrency", "8", "--grace=0.5", "--root", "apps/example", "--json", "a", "b"], flags);
    expect(parsed.flags).toMatchObject({ concurrency: 8, grace: 0.5, root: "apps/example", json: true });
    expect(parsed.positionals).toEqual(["a", "b"]);
  });

  it("turns a negatable boolean off with --no-<name>, and knows short flags", () => {
    expect(parseArgs(["--no-worker", "-h"], flags).flags).toMatchObject({ worker: false, help: true });
  });

  it("treats everything after -- as positional", () => {
    expect(parseArgs(["--", "--json"], flags)).toMatchObject({ positionals: ["--json"], flags: { json: false } });
  });

  it("names an unknown flag and suggests the close one", () => {
    expect(usageMessage(["--concurency", "3"])).toBe("unknown flag --concurency (did you mean --concurrency?)");
    expect(usageMessage(["--bogus"])).toBe("unknown flag --bogus");
    expect(usageMessage(["--no-json"])).toBe("unknown flag --no-json: --json is off unless given");
  });

  it("rejects values of the wrong type or range, naming the flag", () => {
    expect(usageMessage(["--concurrency", "abc"])).toBe('--concurrency expects a whole number, got "abc"');
    expect(usageMessage(["--concurrency", "1.5"])).toBe('--concurrency expects a whole number, got "1.5"');
    expect(usageMessage(["--concurrency", "0"])).toBe("--concurrency must be at least 1, got 0");
    expect(usageMessage(["--grace", "-1"])).toBe("--grace must be at least 0, got -1");
    expect(usageMessage(["--json=yes"])).toBe('--json does not take a value (got "yes")');
  });

  it("asks for a missing value instead of swallowing the next flag", () => {
    expect(usageMessage(["--root"])).toBe("--root needs a value: --root DIR");
    expect(usageMessage(["--root", "--json"])).toBe("--root needs a value: --root DIR");
  });
});
