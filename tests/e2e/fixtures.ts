import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, type Page } from "@playwright/test";

export type E2eFixtures = {
  password: string;
  tenantA: { id: string; name: string };
  tenantB: { id: string; name: string };
  logins: { ownerA: string; memberA: string; ownerB: string };
};

export const fixtures = (): E2eFixtures => JSON.parse(readFileSync(path.join(process.env.E2E_DATA_DIR!, "fixtures.json"), "utf8"));

const SCREENSHOTS = path.join("test-results", "screenshots");

export async function signIn(page: Page, email: string) {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(fixtures().password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/dashboard\/api-keys$/);
  // Signed in: the page and the account's role (in the sidebar, or in the phone menu's drawer).
  await expect(page.getByRole("heading", { level: 1, name: "API keys" })).toBeVisible();
  await expect(page.getByTestId("role")).toBeAttached();
}

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Calls /api/v1 from the page, as an integration would with the key. */
export async function apiFetch(page: Page, pathname: string, key: string) {
  return page.evaluate(
    async ([p, k]) => {
      const res = await fetch(p, { headers: { authorization: `Bearer ${k}` } });
      return { status: res.status, body: await res.json() };
    },
    [pathname, key] as const,
  );
}
