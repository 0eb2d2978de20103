import { describe, expect, it } from "vitest";
import { attempt, FREE_ACCOUNT_FAILURES, FREE_FAILURES, lockedFor, recordSuccess } from "./throttle";

let next = 0;
const anAddress = () => `203.0.113.${next++ % 250}-${Math.random().toString(36).slice(2, 8)}`;
const anAccount = () => `person-${Math.random().toString(36).slice(2, 10)}`;

/** A password check that takes a while, as scrypt does, and counts how often it ran. */
function slowCheck(right: string, ran: { count: number; running: number; most: number }) {
  return (password: string) => async () => {
    ran.count += 1;
    ran.running += 1;
    ran.most = Math.max(ran.most, ran.running);
    await new Promise((r) => setTimeout(r, 5));
    ran.running -= 1;
    return { ok: password === right, value: password };
  };
}

describe("sign-in throttling", () => {
  it("lets the first failures through, then locks the address out for twice as long each time, and forgets it on success", async () => {
    const address = anAddress();
    const account = anAccount();
    const wrong = async () => ({ ok: false, value: null });
    for (let i = 1; i <= FREE_FAILURES; i++) expect(await attempt({ address, account, check: wrong })).toMatchObject({ outcome: "checked", ok: false, failures: i, lockMs: 0 });
    const fifth = await attempt({ address, account, check: wrong });
    expect(fifth).toMatchObject({ outcome: "checked", failures: FREE_FAILURES + 1, lockMs: 2000 });
    expect(lockedFor(address)).toBeGreaterThan(1900);
    expect((await attempt({ address, account, check: async () => ({ ok: true, value: null }) })).outcome).toBe("locked");
    expect(lockedFor("198.51.100.1")).toBe(0);
    recordSuccess(address, account);
    expect(lockedFor(address, account)).toBe(0);
  });

  it("40 wrong passwords in parallel, then the right one: at most the free ones and one more are checked, the right one is refused", async () => {
    const address = anAddress();
    const account = anAccount();
    const ran = { count: 0, running: 0, most: 0 };
    const check = slowCheck("right", ran);
    const wrong = Array.from({ length: 40 }, (_, i) => attempt({ address, account, check: check(`wrong ${i}`) }));
    const right = await attempt({ address, account, check: check("right") });
    const results = await Promise.all(wrong);
    expect(right.outcome).toBe("locked");
    expect(ran.count).toBeLessThanOrEqual(FREE_FAILURES + 1);
    // One check at a time per address.
    expect(ran.most).toBe(1);
    expect(results.filter((r) => r.outcome === "checked")).toHaveLength(ran.count);
    expect(lockedFor(address, account)).toBeGreaterThan(0);
  });

  it("counts per account too: guesses at one name from many addresses lock that name, not the addresses' other names", async () => {
    const account = anAccount();
    const wrong = async () => ({ ok: false, value: null });
    for (let i = 0; i < FREE_ACCOUNT_FAILURES + 1; i++) await attempt({ address: anAddress(), account, check: wrong });
    const fresh = anAddress();
    const refused = await attempt({ address: fresh, account, check: async () => ({ ok: true, value: null }) });
    expect(refused.outcome).toBe("locked");
    expect(lockedFor(fresh, account)).toBeGreaterThan(0);
    expect((await attempt({ address: fresh, account: anAccount(), check: async () => ({ ok: true, value: null }) })).outcome).toBe("checked");
  });

  it("counts an attempt before its check: a right password after four failures still clears the count", async () => {
    const address = anAddress();
    const account = anAccount();
    for (let i = 0; i < FREE_FAILURES; i++) await attempt({ address, account, check: async () => ({ ok: false, value: null }) });
    let locked = -1;
    const ok = await attempt({ address, account, check: async () => ((locked = lockedFor(address)), { ok: true, value: null }) });
    // During the check the attempt was already counted (the fifth: the address is locked while it runs).
    expect(locked).toBeGreaterThan(0);
    expect(ok).toMatchObject({ outcome: "checked", ok: true });
    expect(lockedFor(address, account)).toBe(0);
  });
});
