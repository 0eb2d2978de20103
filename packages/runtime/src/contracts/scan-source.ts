import type * as TS from "typescript";

type Ts = typeof TS;

/** What one source file declares and does, before it is attributed to a module. */
export interface SourceFacts {
  events: Array<{ type: string; line: number }>;
  jobs: Array<{ task: string; line: number }>;
  tasks: Array<{ name: string; session: boolean; schedule: string | null; line: number }>;
  /** `exportName`: the name the runtime would give it; `explicitName`: the `name` option. */
  subscriptions: Array<{ type: string; exportName: string | null; explicitName: string | null; session: boolean; line: number }>;
  schedules: Array<{ task: string; schedule: string; name: string | null; line: number }>;
  /** `on(topic, handler)`: a Kafka handler; `types` are the event types its body compares `.type` with (null: none). */
  consumes: Array<{ topic: string; types: string[] | null; line: number }>;
  /** `events.publish(topic, event)` or `outbox.publish(tx, topic, event)`; `type` when the event is `new Event({ type })`. */
  produces: Array<{ topic: string; type: string | null; line: number }>;
  unresolved: Array<{ kind: "event" | "job" | "task" | "subscribe" | "topic"; text: string; line: number }>;
}

const TASK_LIKE = /^[a-z0-9_]+(\.[a-zA-Z0-9_\-]+)+$/;
/** A receiver whose `.publish(...)` is ours: `x.require("events" | "outbox")`, or a name that says so (`outbox`, `events`). */
const PUBLISHER_NAME = /outbox|events/i;

/**
 * Reads one file's syntax tree (no type checking, nothing executed) for the calls contracts care about:
 * `new Event({ type })`, `new Job({ task })`, `subscribe(type, ...)`, `task(name, ...)`, `x.task(name, ...)`
 * and `x.schedule(task, { cron | every })`. Names are followed through import aliases (`import { Event as
 * DomainEvent }`), namespace imports (`jf.Event`) and `const` strings or `const` objects in the same file;
 * anything else (a type computed at run time, a constant imported from another file) is reported as
 * unresolved rather than guessed.
 */
export function scanSource(ts: Ts, fileName: string, text: string): SourceFacts {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKind(ts, fileName));
  const facts: SourceFacts = { events: [], jobs: [], tasks: [], subscriptions: [], schedules: [], consumes: [], produces: [], unresolved: [] };
  const imports = new Map<string, string>();
  const namespaces = new Set<string>();
  const ownDeclarations = new Set<string>();
  const exportedAs = new Map<string, string>();
  const constants = collectConstants(ts, source);

  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause && !statement.importClause.isTypeOnly) {
      const bindings = statement.importClause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          if (!element.isTypeOnly) imports.set(element.name.text, (element.propertyName ?? element.name).getText(source));
        }
      }
    } else if ((ts.isClassDeclaration(statement) || ts.isFunctionDeclaration(statement)) && statement.name) {
      // A service's own `class Event` is not ours.
      ownDeclarations.add(statement.name.text);
    } else if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        exportedAs.set((element.propertyName ?? element.name).getText(source), element.name.getText(source));
      }
    }
  }

  const lineOf = (node: TS.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const snippet = (node: TS.Node) => node.getText(source).replace(/\s+/g, " ").slice(0, 80);

  /** The runtime name a callee stands for ("Event", "task"...), or null when it is the service's own. */
  const calleeName = (expression: TS.Expression): string | null => {
    if (ts.isIdentifier(expression)) {
      const imported = imports.get(expression.text);
      if (imported !== undefined) return imported;
      return ownDeclarations.has(expression.text) ? null : expression.text;
    }
    if (ts.isPropertyAccessExpression(expression) && ts.isIdentifier(expression.expression) && namespaces.has(expression.expression.text)) {
      return expression.name.text;
    }
    return null;
  };
  const isImported = (expression: TS.Expression) =>
    (ts.isIdentifier(expression) && imports.has(expression.text)) || ts.isPropertyAccessExpression(expression);

  const str = (expression: TS.Expression | undefined): string | null => resolveString(ts, expression, constants);
  /** The type of `new Event({ type })`, inline or in a `const` of this file. */
  const eventType = (expression: TS.Expression): string | null => {
    let node = unwrap(ts, expression);
    if (ts.isIdentifier(node)) node = constants.get(node.text) ? unwrap(ts, constants.get(node.text)!) : node;
    if (!ts.isNewExpression(node) || calleeName(node.expression) !== "Event") return null;
    const init = node.arguments?.[0];
    return init && ts.isObjectLiteralExpression(init) ? str(property(ts, init, "type")) : null;
  };

  const visit = (node: TS.Node): void => {
    if (ts.isNewExpression(node)) {
      const name = calleeName(node.expression);
      const wanted = name === "Event" ? "type" : name === "Job" ? "task" : null;
      if (wanted) {
        const init = node.arguments?.[0];
        const kind = name === "Event" ? "event" : "job";
        if (init && ts.isObjectLiteralExpression(init)) {
          const value = str(property(ts, init, wanted));
          if (value === null) facts.unresolved.push({ kind, text: snippet(node), line: lineOf(node) });
          else if (kind === "event") facts.events.push({ type: value, line: lineOf(node) });
          else facts.jobs.push({ task: value, line: lineOf(node) });
        } else if (isImported(node.expression)) {
          // `new Event("click")` with the global (DOM) Event is not ours; an imported one built from a variable is.
          facts.unresolved.push({ kind, text: snippet(node), line: lineOf(node) });
        }
      }
    } else if (ts.isCallExpression(node)) {
      visitCall(node);
    }
    ts.forEachChild(node, visit);
  };

  const visitCall = (call: TS.CallExpression): void => {
    const name = calleeName(call.expression);
    const method = ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : null;
    const [first, second] = call.arguments;
    const options = call.arguments.length >= 3 && second && ts.isObjectLiteralExpression(second) ? second : null;
    if (name === "subscribe") {
      const type = str(first);
      if (type === null) {
        facts.unresolved.push({ kind: "subscribe", text: snippet(call), line: lineOf(call) });
        return;
      }
      facts.subscriptions.push({
        type,
        exportName: exportNameOf(ts, call, exportedAs),
        explicitName: options ? str(property(ts, options, "name")) : null,
        session: options ? isTrue(ts, property(ts, options, "session")) : false,
        line: lineOf(call),
      });
      return;
    }
    if (name === "task" || method === "task") {
      const taskName = str(first);
      if (taskName === null || (name !== "task" && !TASK_LIKE.test(taskName))) {
        // `gulp.task(...)` and the like: only a name that looks like ours counts for the method form.
        if (name === "task") facts.unresolved.push({ kind: "task", text: snippet(call), line: lineOf(call) });
        return;
      }
      facts.tasks.push({
        name: taskName,
        session: options ? isTrue(ts, property(ts, options, "session")) : false,
        schedule: options ? scheduleText(ts, options, source) : null,
        line: lineOf(call),
      });
      return;
    }
    if (name === "on" && first && second && (ts.isArrowFunction(second) || ts.isFunctionExpression(second))) {
      const topic = str(first);
      if (topic === null) facts.unresolved.push({ kind: "topic", text: snippet(call), line: lineOf(call) });
      else facts.consumes.push({ topic, types: comparedTypes(ts, second), line: lineOf(call) });
      return;
    }
    if (method === "publish" && isPublisher(ts, (call.expression as TS.PropertyAccessExpression).expression)) {
      // events.publish(topic, event) | outbox.publish(tx, topic, event)
      const [topicArg, eventArg] = call.arguments.length >= 3 ? [call.arguments[1], call.arguments[2]] : [first, second];
      if (!topicArg || !eventArg) return;
      const topic = str(topicArg);
      if (topic === null) facts.unresolved.push({ kind: "topic", text: snippet(call), line: lineOf(call) });
      else facts.produces.push({ topic, type: eventType(eventArg), line: lineOf(call) });
      return;
    }
    if (method === "schedule" && second && ts.isObjectLiteralExpression(second)) {
      const taskName = str(first);
      const schedule = scheduleText(ts, second, source);
      if (taskName !== null && schedule !== null) {
        facts.schedules.push({ task: taskName, schedule, name: str(property(ts, second, "name")), line: lineOf(call) });
      }
    }
  };

  visit(source);
  return facts;
}

function scriptKind(ts: Ts, fileName: string): TS.ScriptKind {
  if (/\.tsx$/.test(fileName)) return ts.ScriptKind.TSX;
  if (/\.jsx$/.test(fileName)) return ts.ScriptKind.JSX;
  if (/\.[cm]?js$/.test(fileName)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/** `const A = "x"` and `const O = { a: "x" }` anywhere in the file; a name bound twice is dropped (ambiguous). */
function collectConstants(ts: Ts, source: TS.SourceFile): Map<string, TS.Expression | null> {
  const constants = new Map<string, TS.Expression | null>();
  const visit = (node: TS.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      ts.isVariableDeclarationList(node.parent) &&
      (node.parent.flags & ts.NodeFlags.Const) !== 0
    ) {
      const name = node.name.text;
      constants.set(name, constants.has(name) ? null : node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return constants;
}

function unwrap(ts: Ts, expression: TS.Expression): TS.Expression {
  let current = expression;
  while (ts.isAsExpression(current) || ts.isSatisfiesExpression(current) || ts.isParenthesizedExpression(current)) {
    current = current.expression;
  }
  return current;
}

function resolveString(
  ts: Ts,
  expression: TS.Expression | undefined,
  constants: Map<string, TS.Expression | null>,
  depth = 0,
): string | null {
  if (!expression || depth > 5) return null;
  const node = unwrap(ts, expression);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isIdentifier(node)) return resolveString(ts, constants.get(node.text) ?? undefined, constants, depth + 1);
  if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
    const target = constants.get(node.expression.text);
    const object = target ? unwrap(ts, target) : null;
    if (object && ts.isObjectLiteralExpression(object)) {
      return resolveString(ts, property(ts, object, node.name.text), constants, depth + 1);
    }
  }
  return null;
}

/** The value of `key` in an object literal (`key: v` or the shorthand `{ key }`). */
function property(ts: Ts, object: TS.ObjectLiteralExpression, key: string): TS.Expression | undefined {
  for (const element of object.properties) {
    if (ts.isPropertyAssignment(element) && propertyName(ts, element.name) === key) return element.initializer;
    if (ts.isShorthandPropertyAssignment(element) && element.name.text === key) return element.name;
  }
  return undefined;
}

function propertyName(ts: Ts, name: TS.PropertyName): string | null {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  return null;
}

function isTrue(ts: Ts, expression: TS.Expression | undefined): boolean {
  return expression !== undefined && unwrap(ts, expression).kind === ts.SyntaxKind.TrueKeyword;
}

function scheduleText(ts: Ts, options: TS.ObjectLiteralExpression, source: TS.SourceFile): string | null {
  const cron = property(ts, options, "cron");
  const every = property(ts, options, "every");
  const zone = property(ts, options, "timezone");
  const text = (e: TS.Expression) => e.getText(source).replace(/\s+/g, " ");
  if (cron) return `cron ${text(cron)}${zone ? ` in ${text(zone)}` : ""}`;
  if (every) return `every ${text(every)}`;
  return null;
}

/** `export const checkBudget = subscribe(...)` → "checkBudget"; `const x = subscribe(...); export { x as y }` → "y". */
function exportNameOf(ts: Ts, call: TS.CallExpression, exportedAs: Map<string, string>): string | null {
  let node: TS.Node = call;
  while (ts.isAsExpression(node.parent) || ts.isSatisfiesExpression(node.parent) || ts.isParenthesizedExpression(node.parent)) {
    node = node.parent;
  }
  const declaration = node.parent;
  if (!ts.isVariableDeclaration(declaration) || !ts.isIdentifier(declaration.name)) return null;
  const statement = declaration.parent?.parent;
  const local = declaration.name.text;
  if (statement && ts.isVariableStatement(statement) && statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
    return local;
  }
  const exported = exportedAs.get(local);
  // The runtime names subscribers after named exports only.
  return exported === undefined || exported === "default" ? null : exported;
}

function isPublisher(ts: Ts, receiver: TS.Expression): boolean {
  const node = unwrap(ts, receiver);
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "require") {
    const [name] = node.arguments;
    return name !== undefined && ts.isStringLiteral(name) && (name.text === "events" || name.text === "outbox");
  }
  if (ts.isIdentifier(node)) return PUBLISHER_NAME.test(node.text);
  if (ts.isPropertyAccessExpression(node)) return PUBLISHER_NAME.test(node.name.text);
  return false;
}

/**
 * The event types a Kafka handler tells apart: string literals compared with `<x>.type` (`===`, `!==`, `==`,
 * `!=`) or listed as `case`s of `switch (<x>.type)`. null when it compares none (it takes every event).
 */
function comparedTypes(ts: Ts, handler: TS.Node): string[] | null {
  const types = new Set<string>();
  const isTypeAccess = (e: TS.Expression) => ts.isPropertyAccessExpression(unwrap(ts, e)) && (unwrap(ts, e) as TS.PropertyAccessExpression).name.text === "type";
  const literal = (e: TS.Expression) => {
    const node = unwrap(ts, e);
    return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : null;
  };
  const EQUALITY = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken]);
  const visit = (node: TS.Node): void => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      const value = isTypeAccess(node.left) ? literal(node.right) : isTypeAccess(node.right) ? literal(node.left) : null;
      if (value !== null) types.add(value);
    } else if (ts.isSwitchStatement(node) && isTypeAccess(node.expression)) {
      for (const clause of node.caseBlock.clauses) {
        const value = ts.isCaseClause(clause) ? literal(clause.expression) : null;
        if (value !== null) types.add(value);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(handler);
  return types.size ? [...types].sort() : null;
}
