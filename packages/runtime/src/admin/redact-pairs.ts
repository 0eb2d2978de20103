/**
 * A JSON name opening a value, at any depth of escaping: `"password": `, `\"password\":`, `\\\"password\\\":`.
 * Group 1 is the escaping (the backslashes before each quote), group 2 the name.
 */
const NAME = /(\\*)"([^"\\]{1,200})\1"\s*:\s*/g;

/**
 * Hides the value of every `"<name>": value` pair in `text` whose name is hidden, however deeply the JSON is
 * escaped: an error message built with `JSON.stringify(payload)` carries the secret of a field that may not even be
 * in this job's payload (another object's password). A string value ends at the quote with exactly the escaping
 * its name had (a quote with more backslashes is inside the value); a number, true, false or null ends at the
 * next delimiter.
 */
export function scrubPairs(text: string, hides: (name: string) => boolean, marker: string): string {
  if (!text.includes('"')) return text;
  let out = "";
  let from = 0;
  NAME.lastIndex = 0;
  for (let match = NAME.exec(text); match !== null; match = NAME.exec(text)) {
    if (!hides(match[2]!)) continue;
    const escaping = match[1]!;
    const valueStart = match.index + match[0].length;
    const end = valueEnd(text, valueStart, escaping);
    if (end === null) continue;
    out += `${text.slice(from, valueStart)}${escaping}"${marker}${escaping}"`;
    from = end;
    NAME.lastIndex = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Where the value starting at `start` ends (exclusive), or null when it is not a value (an object, an array). */
function valueEnd(text: string, start: number, escaping: string): number | null {
  const open = `${escaping}"`;
  if (text.startsWith(open, start)) {
    for (let i = start + open.length; i < text.length; i++) {
      if (text[i] !== '"') continue;
      let run = 0;
      while (run < i && text[i - 1 - run] === "\\") run++;
      if (run === escaping.length) return i + 1;
    }
    // An unterminated string (a message cut short): everything after the name is the value.
    return text.length;
  }
  const scalar = /^(-?[\d.eE+-]+|true|false|null)/.exec(text.slice(start, start + 400));
  if (!scalar || scalar[1] === "null") return null;
  return start + scalar[1]!.length;
}
