import { answered } from "~/server/live-streams";
import { currentPerson } from "~/server/session";

export const dynamic = "force-dynamic";

/** A tab's answer to its stream's ping (`?id=` from the ping): keeps the stream open (server/live-streams.ts). */
export async function POST(request: Request) {
  if (!(await currentPerson())) return new Response("log in to the dashboard first", { status: 401 });
  const id = new URL(request.url).searchParams.get("id") ?? "";
  if (!/^[\w-]{16,64}$/.test(id)) return new Response("no stream id", { status: 400 });
  return new Response(null, { status: answered(id) ? 204 : 410 });
}
