/**
 * Renders generated documents as YAML (several are separated by `---`). Every string is double-quoted:
 * "8000:8000" or "30s" unquoted are read as numbers by some YAML 1.1 parsers. Shared objects are written out
 * in full rather than as anchors, so each service reads on its own. `yaml` is loaded on call, so a
 * service importing the runtime never loads it.
 */
export async function toYaml(documents: unknown | readonly unknown[], options: { header?: string } = {}): Promise<string> {
  const { stringify } = await import("yaml");
  const list = Array.isArray(documents) ? documents : [documents];
  const body = list
    .map((doc) => stringify(doc, { defaultStringType: "QUOTE_DOUBLE", defaultKeyType: "PLAIN", lineWidth: 0, aliasDuplicateObjects: false }))
    .join("---\n");
  const header = options.header ? options.header.split("\n").map((line) => `# ${line}`.trimEnd()).join("\n") + "\n" : "";
  return header + body;
}
