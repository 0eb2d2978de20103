import { createHmac, timingSafeEqual, createHash } from "node:crypto";
import { cookies } from "next/headers";
import { dashboardConfig } from "./config";

export const SESSION_COOKIE = "jfast_session";
const SESSION_HOURS = 12;

/** A session cookie is `<expiry ms>.<hmac>`: nothing to store server-side, nothing secret in it. */
export function issueSession(now = Date.now()): { value: string; maxAge: number } {
  const expires = now + SESSION_HOURS * 3600_000;
  return { value: `${expires}.${sign(String(expires))}`, maxAge: SESSION_HOURS * 3600 };
}

export function isValidSession(value: string | undefined): boolean {
  if (!value) return false;
  const [expires, mac] = value.split(".");
  if (!expires || !mac || !/^\d+$/.test(expires) || Number(expires) < Date.now()) return false;
  return safeEqual(mac, sign(expires));
}

export async function hasSession(): Promise<boolean> {
  return isValidSession((await cookies()).get(SESSION_COOKIE)?.value);
}

export function checkPassword(candidate: string): boolean {
  const { password } = dashboardConfig();
  if (!password) return false;
  return safeEqual(digest(candidate), digest(password));
}

function sign(data: string): string {
  return createHmac("sha256", dashboardConfig().secret).update(data).digest("hex");
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
