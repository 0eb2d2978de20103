import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** The workers of every service come with the page's HTML. */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.workers.list.queryOptions({})]}>{children}</WithFirstData>;
}
