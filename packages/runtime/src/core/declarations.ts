import type { TaskDefinition } from "./task.js";

/**
 * Declarations made by `task(...)` at import time, remembered per tasks file. ES modules are evaluated once
 * per process, so a second app built in the same process (tests, the CLI) must find what the first import
 * declared: we key declarations by file, not by "whatever ran last". Kept on globalThis so that two copies
 * of the runtime loaded side by side still share them.
 */
interface DeclarationStore {
  byFile: Map<string, TaskDefinition[]>;
  scope: { module: string; file: string } | null;
}

const KEY = Symbol.for("jfast.declarations");
const store: DeclarationStore = ((globalThis as Record<symbol, unknown>)[KEY] as DeclarationStore | undefined) ?? {
  byFile: new Map(),
  scope: null,
};
(globalThis as Record<symbol, unknown>)[KEY] = store;

export function recordDeclaration(definition: TaskDefinition): void {
  const scope = store.scope;
  if (!scope) return;
  definition.module = scope.module;
  definition.file = scope.file;
  const list = store.byFile.get(scope.file) ?? [];
  list.push(definition);
  store.byFile.set(scope.file, list);
}

/** The module and file being imported right now, for other declarations made at import (Kafka `on`). */
export function currentDeclarationScope(): { module: string; file: string } | null {
  return store.scope;
}

/** Imports a tasks file with declarations attributed to `module`; returns what that file declared. */
export async function importDeclarations(
  module: string,
  file: string,
  load: () => Promise<unknown>,
): Promise<{ definitions: TaskDefinition[]; namespace: unknown }> {
  const previous = store.scope;
  store.scope = { module, file };
  try {
    const namespace = await load();
    const recorded = store.byFile.get(file) ?? [];
    // A tasks file that other code imported before discovery (a server.ts referencing one of its tasks) ran
    // with no scope, so nothing was recorded for it; its exported definitions are still in its namespace.
    const missed = Object.values((namespace ?? {}) as Record<string, unknown>)
      .filter(isDefinition)
      .filter((definition) => !recorded.includes(definition));
    for (const definition of missed) {
      definition.module ??= module;
      definition.file ??= file;
    }
    if (missed.length > 0) store.byFile.set(file, [...recorded, ...missed]);
    return { definitions: [...(store.byFile.get(file) ?? [])], namespace };
  } finally {
    store.scope = previous;
  }
}

function isDefinition(value: unknown): value is TaskDefinition {
  const kind = (value as { kind?: unknown } | null)?.kind;
  return (kind === "task" || kind === "subscriber") && typeof (value as { handler?: unknown }).handler === "function";
}
