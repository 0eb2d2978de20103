import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** Each service's outbox status, its dead rows and the token's role come with the page's HTML. */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.outbox.status.queryOptions(), trpc.outbox.dead.queryOptions({ limit: 50 }), trpc.overview.whoami.queryOptions()]}>{children}</WithFirstData>;
}
