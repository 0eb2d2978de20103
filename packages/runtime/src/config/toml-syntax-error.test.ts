import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { maskSecrets, tomlSyntaxMessage } from "./toml-syntax-error.js";

function messageFor(toml: string): string {
  try {
    parse(toml);
  } catch (error) {
    return tomlSyntaxMessage(error);
  }
  throw new Error("the document parsed");
}

describe("TOML syntax errors", () => {
  it("mask admin tokens, URL passwords and secret keys on the quoted lines, keeping the caret's column", () => {
    const token = "0123456789abcdef0123456789abcdef";
    const message = messageFor(`[admin]\ntokens = ["viewer:${token}", "ops:operator:${token}]\n`);
    expect(message).not.toContain(token);
    expect(message).toContain(`"viewer:${"*".repeat(token.length)}"`);
    expect(message).toContain(`"ops:operator:${"*".repeat(token.length)}`);
    const lines = message.split("\n");
    const caret = lines.findIndex((l) => l.trim() === "^");
    const quoted = lines[caret - 1]!;
    expect(quoted.length).toBe(`2:  tokens = ["viewer:${token}", "ops:operator:${token}]`.length);

    expect(messageFor(`[plugin.queue]\nurl = "amqp://app:hunter2hunter2@broker:5672\n`)).toContain(`amqp://app:${"*".repeat(14)}@broker:5672`);
    expect(maskSecrets(`password = "swordfish`)).toBe(`password = "*********`);
    expect(maskSecrets(`api_key = abc def`)).toBe(`api_key = *** ***`);
    expect(maskSecrets(`x = "sk_live_51HcQ2eKl0aBcDeFgHiJ"`)).toBe(`x = "${"*".repeat("sk_live_51HcQ2eKl0aBcDeFgHiJ".length)}"`);
  });

  it("leave ordinary values readable", () => {
    expect(maskSecrets(`name = "billing"`)).toBe(`name = "billing"`);
    expect(maskSecrets(`enabled = ["queue", "database"]`)).toBe(`enabled = ["queue", "database"]`);
    expect(maskSecrets(`url = "postgres://localhost:5432/app"`)).toBe(`url = "postgres://localhost:5432/app"`);
    expect(messageFor(`[service]\nname = "billing\n`)).toContain(`name = "billing`);
  });
});
