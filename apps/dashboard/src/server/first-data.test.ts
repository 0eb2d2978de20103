import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { QueryClient } from "@tanstack/react-query";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceClient, SignInRequiredError } from "~/trpc/server";
import { prefetchFirstData } from "./first-data";

/** A service's admin API stand-in that records who called it: the check is that nobody does without a person. */
let server: Server;
const calls: { url: string; actor: string | undefined }[] = [];
let service: { name: string; url: string; token: string };

beforeAll(async () => {
  server = createServer((req, res) => {
    calls.push({ url: req.url ?? "", actor: req.headers["x-jfast-actor"] as string | undefined });
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ result: { data: { name: "olga" } } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  service = { name: "billing", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "t" };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the server-side prefetch", () => {
  it("throws without a signed-in person, before any service is called", async () => {
    calls.length = 0;
    const queryClient = new QueryClient();
    await expect(prefetchFirstData({ person: null, queryClient, services: [service], queries: (trpc) => [trpc.overview.whoami.queryOptions()] })).rejects.toThrow(SignInRequiredError);
    expect(() => serviceClient(service, null)).toThrow(SignInRequiredError);
    expect(() => serviceClient(service, { name: "", role: "admin" })).toThrow(SignInRequiredError);
    expect(calls).toEqual([]);
  });

  it("calls each service for the person, naming them", async () => {
    calls.length = 0;
    const queryClient = new QueryClient();
    await prefetchFirstData({ person: { name: "olga", role: "operator" }, queryClient, services: [service], queries: (trpc) => [trpc.overview.whoami.queryOptions()] });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toContain("/jfast/admin/overview.whoami");
    expect(calls[0]!.actor).toBe("operator olga");
  });
});
