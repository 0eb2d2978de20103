import type { ReactNode } from "react";
import { WithFirstData } from "~/server/prefetch";

/** Each service's contracts graph comes with the page's HTML; the layout is computed in the browser. */
export default function Layout({ children }: { children: ReactNode }) {
  return <WithFirstData queries={(trpc) => [trpc.contracts.graph.queryOptions()]}>{children}</WithFirstData>;
}
