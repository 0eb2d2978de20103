import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** Every service's alert rules come with the page's HTML. */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.alerts.list.queryOptions()]}>{children}</WithFirstData>;
}
