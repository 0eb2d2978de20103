// Password hashes for the dashboard's users: scrypt (node:crypto), stored as
// `scrypt$<N>$<r>$<p>$<salt, base64url>$<hash, base64url>` so the cost can be raised later without
// invalidating hashes made before. `jfast-dashboard hash-password` makes one.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{40,})$/;

function derive(password, salt, { N, r, p }) {
  return new Promise((resolve, reject) =>
    // 128 * N * r bytes of memory, plus headroom: Node's default cap (32 MiB) is exactly 2^15 * 8 * 128.
    scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** @param {string} password */
export async function hashPassword(password) {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** @param {string} hash */
export function isPasswordHash(hash) {
  return typeof hash === "string" && FORMAT.test(hash);
}

/** Compares in constant time; a malformed hash never matches. */
export async function verifyPassword(password, hash) {
  const match = FORMAT.exec(hash);
  if (!match) return false;
  const [, N, r, p, salt, expected] = match;
  const want = Buffer.from(expected, "base64url");
  const key = await derive(password, Buffer.from(salt, "base64url"), { N: Number(N), r: Number(r), p: Number(p) });
  return key.length === want.length && timingSafeEqual(key, want);
}
