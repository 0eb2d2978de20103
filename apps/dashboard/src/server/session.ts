import { createHmac, randomBytes, timingSafeEqual, createHash } from "node:crypto";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { normaliseAddress } from "../../lib/config.mjs";
import { verifyPassword } from "../../lib/passwords.mjs";
import { dashboardConfig, type DashboardRole } from "./config";
import { proxyPerson } from "./proxy-person";

export const SESSION_COOKIE = "jfast_session";

/** The person a request acts for, and how they got in. */
export interface Person {
  name: string;
  role: DashboardRole;
  via: "session" | "proxy";
}

interface Session {
  name: string;
  role: DashboardRole;
  expires: number;
}

/**
 * Sessions live in this process's memory (one dashboard process: restarting it signs everyone out; several
 * replicas behind a balancer need sticky sessions). The cookie holds a random id and its HMAC under the
 * configured secret; the id maps to the person here, so logging out or expiry ends it for good.
 */
const STORE = Symbol.for("jfast.dashboard.sessions");
function sessions(): Map<string, Session> {
  const holder = globalThis as { [STORE]?: Map<string, Session> };
  return (holder[STORE] ??= new Map());
}

export function createSession(person: { name: string; role: DashboardRole }, now = Date.now()): { cookie: string; maxAge: number } {
  const { sessionHours } = dashboardConfig();
  const id = randomBytes(32).toString("base64url");
  sessions().set(id, { name: person.name, role: person.role, expires: now + sessionHours * 3600_000 });
  sweep(now);
  return { cookie: `${id}.${sign(id)}`, maxAge: Math.round(sessionHours * 3600) };
}

export function endSession(cookie: string | undefined): void {
  const id = idOf(cookie);
  if (id) sessions().delete(id);
}

function idOf(cookie: string | undefined): string | null {
  if (!cookie) return null;
  const [id, mac] = cookie.split(".");
  if (!id || !mac || !safeEqual(mac, sign(id))) return null;
  return id;
}

function sessionOf(cookie: string | undefined, now = Date.now()): Session | null {
  const id = idOf(cookie);
  if (!id) return null;
  const session = sessions().get(id);
  if (!session) return null;
  if (session.expires <= now) {
    sessions().delete(id);
    return null;
  }
  return session;
}

function sweep(now: number): void {
  for (const [id, session] of sessions()) if (session.expires <= now) sessions().delete(id);
}

/** The person behind the current request: a proxy's trusted header when configured, else the session cookie. */
export async function currentPerson(): Promise<Person | null> {
  return personFrom(await headers(), (await cookies()).get(SESSION_COOKIE)?.value);
}

/**
 * The person for a request's headers and session cookie, checked on this server: the proxy's header only from a
 * trusted proxy, the cookie only when its HMAC holds and its session is live here. src/proxy.ts calls it for every
 * console request; pages and routes call it again through currentPerson().
 */
export function personFrom(request: Headers, cookie: string | undefined): Person | null {
  const config = dashboardConfig();
  const fromProxy = proxyPerson({ proxy: config.proxyAuth, users: config.users, headers: request, peer: peerAddress(request), secretMatches: (a, b) => safeEqual(digest(a), digest(b)) });
  if (fromProxy) return { ...fromProxy, via: "proxy" };
  const session = sessionOf(cookie);
  return session ? { name: session.name, role: session.role, via: "session" } : null;
}

/** The signed-in person, or the way to the login page: for pages and layouts that render someone's data. */
export async function requirePerson(): Promise<Person> {
  const person = await currentPerson();
  if (!person) redirect("/login");
  return person;
}

/** The marker by which the binary proves it set the peer header (a client cannot know it). */
const PEER_KEY = Symbol.for("jfast.dashboard.peerKey");
export const PEER_HEADER = "x-jfast-peer";

/** The client's address as the binary saw the TCP connection; null under `next dev`, which does not tell. */
export function peerAddress(request: Headers): string | null {
  const key = (globalThis as { [PEER_KEY]?: string })[PEER_KEY];
  const value = request.get(PEER_HEADER);
  if (!key || !value) return null;
  const [presented, address] = value.split(" ");
  return presented && address && safeEqual(presented, key) ? normaliseAddress(address) : null;
}

/** Checks a user's password (scrypt hash, or the shared password of earlier versions); unknown names cost the same. */
export async function checkCredentials(name: string, password: string): Promise<{ name: string; role: DashboardRole } | null> {
  const user = dashboardConfig().users.find((u) => u.name === name);
  if (user?.password) return safeEqual(digest(password), digest(user.password)) ? { name: user.name, role: user.role } : null;
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
  return ok && user?.passwordHash ? { name: user.name, role: user.role } : null;
}

// A well-formed hash nobody's password matches: an unknown name is answered after the same scrypt work.
const DUMMY_HASH = `scrypt$32768$8$1$${"A".repeat(22)}$${"A".repeat(43)}`;

function sign(data: string): string {
  return createHmac("sha256", dashboardConfig().secret).update(data).digest("base64url");
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
