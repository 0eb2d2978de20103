import { findService } from "~/server/config";
import { crossOriginRefusal } from "~/server/same-origin";
import { currentPerson, type Person } from "~/server/session";
import { actorHeaders, mayCall, SERVICE_TIMEOUT_MS, adminUrl } from "~/trpc/server";

/**
 * The browser's only way to a service: `/api/admin/<service>/<procedure>` is forwarded to that service's
 * `/jfast/admin/<procedure>` with the service's bearer token added here, on the server, and the signed-in person
 * in x-jfast-actor (a service trusts it from a dashboard's token only: docs/dashboard.md#identity-on-the-services).
 * A viewer's mutations are refused here, before any service sees them. Answers keep tRPC's wire shape, so the
 * browser's tRPC client reads refusals (FORBIDDEN) and outages alike.
 */
type Params = { params: Promise<{ service: string; procedure: string }> };

export const dynamic = "force-dynamic";

export async function GET(request: Request, { params }: Params) {
  return forward(request, await params);
}

export async function POST(request: Request, { params }: Params) {
  // Mutations only from the dashboard's own pages: the session cookie is SameSite=Lax and the origin must match.
  if (crossOriginRefusal(request)) return trpcError(403, "FORBIDDEN", "cross-site request refused");
  return forward(request, await params);
}

async function forward(request: Request, { service: name, procedure }: { service: string; procedure: string }): Promise<Response> {
  const person = await currentPerson();
  if (!person) return trpcError(401, "UNAUTHORIZED", "log in to the dashboard first");
  if (request.method === "POST") {
    const refusal = mayCall(person, procedure);
    if (refusal) {
      console.warn(JSON.stringify({ level: "warn", msg: "dashboard refused a mutation", user: person.name, role: person.role, procedure }));
      return trpcError(403, "FORBIDDEN", refusal);
    }
  }
  const service = findService(decodeURIComponent(name));
  if (!service) return trpcError(404, "NOT_FOUND", `no service named "${name}" is configured`);
  if (!/^[A-Za-z0-9_.]+$/.test(procedure)) return trpcError(400, "BAD_REQUEST", "not an admin procedure");
  const target = `${adminUrl(service)}/${procedure}${new URL(request.url).search}`;
  try {
    const response = await fetch(target, {
      method: request.method,
      headers: {
        authorization: `Bearer ${service.token}`,
        ...actorHeaders(person),
        ...(request.method === "POST" ? { "content-type": "application/json" } : {}),
      },
      ...(request.method === "POST" ? { body: await request.text() } : {}),
      signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS),
      cache: "no-store",
    });
    return new Response(await response.text(), {
      status: response.status,
      headers: { "content-type": response.headers.get("content-type") ?? "application/json", "cache-control": "no-store" },
    });
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError";
    // The address and the driver's reason are for the dashboard's operator, in its log; a person sees the name.
    console.warn(JSON.stringify({ level: "warn", msg: "dashboard could not reach a service", service: service.name, url: target, reason: timedOut ? "timeout" : describe(error), procedure }));
    return trpcError(502, "BAD_GATEWAY", timedOut ? `${service.name} did not answer within ${SERVICE_TIMEOUT_MS / 1000} s` : `${service.name} is unreachable (the dashboard's log says where it was looked for)`);
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

function trpcError(status: number, code: string, message: string): Response {
  return Response.json({ error: { message, code: -32000, data: { code, httpStatus: status } } }, { status, headers: { "cache-control": "no-store" } });
}
