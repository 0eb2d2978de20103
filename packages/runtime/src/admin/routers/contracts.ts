import { TRPCError } from "@trpc/server";
import { graphFromRegistry } from "../registry-graph.js";
import { router, viewerProcedure } from "../trpc.js";
import type { ContractsGraph } from "../sources.js";

export const contractsRouter = router({
  /**
   * Modules and events as nodes; publishes, subscribes and depends as edges with the checker's violations on
   * them. Without the contracts checker, only what the registered tasks reveal (source "registry").
   */
  graph: viewerProcedure.query(async ({ ctx }): Promise<ContractsGraph> => {
    const contracts = ctx.sources.contracts();
    if (!contracts) return graphFromRegistry(ctx.sources.registry);
    try {
      return await contracts.graph();
    } catch (error) {
      throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `reading contracts failed: ${(error as Error).message}`, cause: error });
    }
  }),
});
