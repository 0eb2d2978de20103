import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** The schedules come with the page's HTML (the page asks for the next 3 ticks of each). */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.schedules.list.queryOptions({ count: 3 })]}>{children}</WithFirstData>;
}
