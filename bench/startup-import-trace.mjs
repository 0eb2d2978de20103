// Preloaded by `npm run startup -- --imports` (node --import): appends each module the process loads to
// STARTUP_IMPORT_TRACE as "<bytes of source>\t<url>". In-thread hooks (module.registerHooks, Node ≥ 22.15) also see
// require() inside CommonJS packages, which the older off-thread hooks do not.
import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";

const file = process.env.STARTUP_IMPORT_TRACE;
registerHooks({
  load(url, context, nextLoad) {
    const result = nextLoad(url, context);
    const source = result.source;
    const bytes = source == null ? 0 : typeof source === "string" ? Buffer.byteLength(source) : source.byteLength;
    appendFileSync(file, `${bytes}\t${url}\n`);
    return result;
  },
});
