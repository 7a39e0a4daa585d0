// Checks the dashboard's browser tests share: console errors collected per page, an axe scan, and
// "fits the screen" (no sideways scrolling, an element fully inside the viewport's width).
import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page } from "@playwright/test";

export const PHONE = { width: 390, height: 844 };
export const LAPTOP = { width: 1440, height: 900 };

/** Every console error and uncaught page error from now on (read the array at the end of the test). */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(`${page.url()}: ${msg.text()}`);
  });
  page.on("pageerror", (err) => errors.push(`${page.url()}: ${err.message}`));
  return errors;
}

/** axe's WCAG 2.x A/AA rules (and its best practices) on the page as it is now: the violations, summarised. */
export async function axeViolations(page: Page) {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]).analyze();
  return result.violations.map((v) => ({ rule: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}

/**
 * The page fits its viewport's width. Polled: right after a viewport change, charts (recharts'
 * ResponsiveContainer) keep their old width until their ResizeObserver fires.
 */
export async function expectNoHorizontalScroll(page: Page) {
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  await expect.poll(overflow, { message: "the page scrolls sideways", timeout: 5_000 }).toBeLessThanOrEqual(0);
}

/** Visible and entirely within the viewport's width (reachable without scrolling sideways). */
export async function expectWithinWidth(page: Page, locator: Locator) {
  await expect(locator).toBeVisible();
  await locator.scrollIntoViewIfNeeded();
  const box = (await locator.boundingBox())!;
  const width = page.viewportSize()!.width;
  expect(box.x, "starts left of the screen").toBeGreaterThanOrEqual(0);
  expect(box.x + box.width, "ends right of the screen").toBeLessThanOrEqual(width);
}
