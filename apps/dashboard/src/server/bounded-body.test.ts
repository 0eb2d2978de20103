import { describe, expect, it } from "vitest";
import { LOGIN_BODY_LIMIT, readSmallForm } from "./bounded-body";

describe("the sign-in form's body", () => {
  it("parses a small form", async () => {
    const form = await readSmallForm(new Request("http://d/api/login", { method: "POST", body: new URLSearchParams({ name: "olga", password: "pw" }) }));
    expect(form?.get("name")).toBe("olga");
    expect(form?.get("password")).toBe("pw");
    const multipart = new FormData();
    multipart.set("name", "ann");
    expect((await readSmallForm(new Request("http://d/api/login", { method: "POST", body: multipart })))?.get("name")).toBe("ann");
  });

  it("refuses a declared length over the limit without reading a byte", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({ pull: (c) => void (pulled++, c.enqueue(new Uint8Array(1024))) });
    const request = new Request("http://d/api/login", { method: "POST", body, headers: { "content-length": String(LOGIN_BODY_LIMIT + 1) }, duplex: "half" } as RequestInit);
    expect(await readSmallForm(request)).toBeNull();
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it("stops reading a body without a length once it passes the limit", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({ pull: (c) => void (pulled++, c.enqueue(new Uint8Array(1024))) }, { highWaterMark: 0 });
    const request = new Request("http://d/api/login", { method: "POST", body, duplex: "half" } as RequestInit);
    expect(await readSmallForm(request)).toBeNull();
    expect(pulled * 1024).toBeLessThan(LOGIN_BODY_LIMIT + 4 * 1024);
  });
});
