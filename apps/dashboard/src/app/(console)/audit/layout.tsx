import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** The newest 100 audit entries of each service come with the page's HTML. */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.audit.list.queryOptions({ limit: 100 })]}>{children}</WithFirstData>;
}
