/** Left-aligned columns separated by two spaces; the last column is never padded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}

/** First line of `text`, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const first = text.split("\n", 1)[0]!.trim();
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** "3m ago", "2h ago", "5d ago": enough to read a dead-letter list at a glance. */
export function ago(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours}h ago`;
  return `${Math.round(hours / 24)}d ago`;
}
