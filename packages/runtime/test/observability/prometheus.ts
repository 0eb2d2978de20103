// Reads GET /metrics the way Prometheus does, enough of it for tests to check values.
import type { Jfast } from "../../src/create-jfast.js";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format: `name{a="b",c="d"} 1.5`, comments skipped; any other line is an error. */
export function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the first sample named `name` whose labels include `labels`. */
export function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** One scrape of the app's /metrics (it must answer 200). */
export async function scrape(jfast: Jfast): Promise<Sample[]> {
  const response = await jfast.fetch(new Request("http://service.test/metrics"));
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return parse(await response.text());
}
