import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** Each service's Kafka consumer status comes with the page's HTML. */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.events.status.queryOptions()]}>{children}</WithFirstData>;
}
