/**
 * The message for a jfast.toml that does not parse. The parser quotes the lines around the mistake, and the
 * mistake is often on the line that holds a secret (a token entry, a URL with a password) that then reaches
 * logs and CI output: values that look secret are masked, with their length kept so the caret still points
 * at the right column.
 */
export function tomlSyntaxMessage(error: unknown): string {
  const { message, codeblock } = error as { message?: unknown; codeblock?: unknown };
  const text = typeof message === "string" ? message : String(error);
  const reason = text.split("\n")[0]!;
  if (typeof codeblock !== "string") return maskSecrets(reason);
  const lines = codeblock.split("\n").map((line) => {
    const numbered = /^(\d+:\s+)(.*)$/.exec(line);
    return numbered ? numbered[1]! + maskSecrets(numbered[2]!) : line;
  });
  return `${maskSecrets(reason)}\n\n${lines.join("\n")}`;
}

/** Keys whose values are secrets whatever they look like. */
const SECRET_KEY = /token|secret|passw|pwd|credential|api_?key|private|auth/i;
/** A role:token or name:role:token entry, as [admin] tokens holds them. */
const TOKEN_ENTRY = /^(?:[^:"']*:)?(?:viewer|operator):/;

/** One line of TOML with secret-looking values replaced by `*`, each as long as what it hides. */
export function maskSecrets(line: string): string {
  const key = /^\s*([A-Za-z0-9_.\-"']+)\s*=/.exec(line)?.[1] ?? "";
  const secret = SECRET_KEY.test(key);
  const start = secret ? line.indexOf("=") + 1 : 0;
  // Quoted strings (an unterminated one runs to the end of the line) and, under a secret key, bare values too.
  return (
    line.slice(0, start) +
    line.slice(start).replace(/(["'])((?:\\.|(?!\1).)*)(\1?)|([^\s[\]{},="']+)/g, (whole, open?: string, body?: string, close?: string, bare?: string) => {
      if (bare !== undefined) return secret ? "*".repeat(bare.length) : whole;
      return open! + maskValue(body!, secret) + close!;
    })
  );
}

function maskValue(value: string, secret: boolean): string {
  if (TOKEN_ENTRY.test(value)) {
    const cut = value.lastIndexOf(":") + 1;
    return value.slice(0, cut) + "*".repeat(value.length - cut);
  }
  if (secret) return "*".repeat(value.length);
  // user:password@ in a URL: the password only.
  const url = /^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)([^@\s]*)(@.*)$/i.exec(value);
  if (url) return url[1]! + "*".repeat(url[2]!.length) + url[3]!;
  // A long unbroken mix of letters and digits reads like a key, whatever its name.
  if (value.length >= 20 && !/[\s/\\]/.test(value) && /[a-z]/i.test(value) && /\d/.test(value)) return "*".repeat(value.length);
  return value;
}
