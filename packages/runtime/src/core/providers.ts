/**
 * Every provider `jfast.require(name)` and `ctx.require(name)` know, by name, with its type. jfast's plugins add
 * theirs (plugins/providers.ts); a service adds its own once, next to where it creates them:
 *
 *   declare module "@jfast/runtime" {
 *     interface Providers { mailer: Mailer }
 *   }
 *
 * A name nobody declared is then a compile error, and `require("mailer")` is a `Mailer`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface Providers {}
