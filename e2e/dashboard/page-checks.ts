import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";
import { PASSWORD } from "./fixtures.js";

/** No serious or critical axe violation on the page, in the dark and in the light theme. */
export async function expectAccessible(page: Page): Promise<void> {
  for (const colorScheme of ["dark", "light"] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await new AxeBuilder({ page }).analyze();
    const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(serious.map((v) => `${colorScheme}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
  }
}

/** Opens `to`, signing in with the shared password first when the dashboard asks for it. */
export async function signedIn(page: Page, to: string): Promise<void> {
  await page.goto(to);
  if (new URL(page.url()).pathname === "/login") {
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.goto(to);
  }
}
