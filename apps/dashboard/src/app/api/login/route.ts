import { checkPassword, issueSession, SESSION_COOKIE } from "~/server/session";

export const dynamic = "force-dynamic";

/** The login form posts here; a right password sets the session cookie, a wrong one goes back with an error. */
export async function POST(request: Request) {
  const form = await request.formData();
  const password = String(form.get("password") ?? "");
  const back = new URL("/login?error=1", request.url);
  if (!checkPassword(password)) return redirect(back.pathname + back.search);
  const session = issueSession();
  const secure = new URL(request.url).protocol === "https:" ? "; Secure" : "";
  return redirect("/", `${SESSION_COOKIE}=${session.value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${session.maxAge}${secure}`);
}

function redirect(location: string, cookie?: string): Response {
  const headers = new Headers({ location });
  if (cookie) headers.set("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}
