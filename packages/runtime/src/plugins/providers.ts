import type { Providers } from "../core/providers.js";
import type { TaskRegistry } from "../core/registry.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import type { EventsBus } from "../kafka/events-bus.js";
import type { Outbox } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { Scheduler } from "../scheduler/scheduler.js";

/** The providers jfast's plugins offer, by the name `require(name)` takes. */
export interface BuiltInProviders {
  tasks: TaskRegistry;
  queue: QueueProvider;
  outbox: Outbox;
  database: DatabaseProvider;
  events: EventsBus;
  scheduler: Scheduler;
}

declare module "../core/providers.js" {
  // Merged the way a service adds its own: core declares the map, the plugins fill it.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Providers extends BuiltInProviders {}
}

/** The service's own providers: those declared in `Providers` beyond jfast's. */
export type ServiceProviders = { [K in Exclude<keyof Providers, keyof BuiltInProviders>]?: Providers[K] };
