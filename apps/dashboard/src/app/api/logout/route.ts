import { cookies } from "next/headers";
import { COOKIE_PATH, withBase } from "~/base-path";
import { endSession, SESSION_COOKIE } from "~/server/session";

/** Ends the session on the server (its cookie no longer opens anything, even if kept) and clears the cookie. */
export async function POST() {
  endSession((await cookies()).get(SESSION_COOKIE)?.value);
  return new Response(null, {
    status: 303,
    headers: { location: withBase("/login"), "set-cookie": `${SESSION_COOKIE}=; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=0` },
  });
}
