// Compile-time checks of the request-context middleware's published types (docs/getting-started.md#your-web-framework).
import type { Jfast } from "@jfast/runtime";

declare const jfast: Jfast;

// Nest: a dynamic module for @Module({ imports: [...] }), checked against the shape Nest's DynamicModule has.
const nestModule = jfast.middleware.nest();
export const dynamicModule: { module: abstract new () => object; global?: boolean; providers?: ReadonlyArray<{ provide: string; useValue: unknown }> } = nestModule;
// @ts-expect-error it is a module to import, not a function
nestModule();

// The others are functions of each framework's arguments.
export const express: (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, next: () => void) => void = jfast.middleware.express();
export const fastify: (request: { headers: Record<string, string | string[] | undefined> }, reply: unknown, done: () => void) => void = jfast.middleware.fastify();
