// The API reference works with the network cut: every request to a host other than this server is
// blocked (and recorded), and the page still lists the operations from the served documents (the
// tenant API's by default, the agent tools' with `?api=agent-tools`; anchors carry the document's slug).
import { expect, test } from "@playwright/test";

test("api_reference_renders_with_every_other_host_blocked", async ({ page, baseURL }) => {
  const own = new URL(baseURL!).host;
  const elsewhere: string[] = [];
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.host === own || url.protocol === "data:" || url.protocol === "blob:") return route.continue();
    elsewhere.push(url.href);
    return route.abort("blockedbyclient");
  });
  const errors: string[] = [];
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));

  const response = await page.goto("/api/v1/docs");
  expect(response?.status()).toBe(200);
  expect(response?.headers()["content-security-policy"]).toContain("default-src 'none'");
  await expect(page.getByRole("link", { name: "/api/v1/openapi.json" })).toHaveAttribute("href", "/api/v1/openapi.json");

  // The document's tags and the first tag's operations, rendered by the bundle served from this origin.
  for (const tag of ["Offerings", "Appointments", "Conversations", "Leads", "Analytics", "CRM"]) {
    await expect(page.getByRole("link", { name: tag, exact: true })).toBeVisible();
  }
  for (const [method, path] of [
    ["GET", "offerings"],
    ["POST", "offerings"],
    ["PATCH", "offerings/{id}"],
  ]) {
    await expect(page.locator(`a[href="#tenant-api/tag/offerings/${method}/${path}"]`)).toBeVisible();
  }
  await expect(page.getByRole("heading", { name: "Offerings", level: 2 })).toBeVisible();
  expect(elsewhere).toEqual([]);
  expect(errors.filter((e) => /Content Security Policy|Refused to/.test(e))).toEqual([]);
});

test("api_reference_shows_the_agent_tools_document_with_every_other_host_blocked", async ({ page, baseURL }) => {
  const own = new URL(baseURL!).host;
  const elsewhere: string[] = [];
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.host === own || url.protocol === "data:" || url.protocol === "blob:") return route.continue();
    elsewhere.push(url.href);
    return route.abort("blockedbyclient");
  });
  const errors: string[] = [];
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));

  // The page links the tools' document and a view of it (also without JavaScript).
  const response = await page.goto("/api/v1/docs");
  expect(response?.status()).toBe(200);
  await expect(page.getByRole("link", { name: "/api/agent/v1/openapi.json" })).toHaveAttribute("href", "/api/agent/v1/openapi.json");
  await page.getByRole("link", { name: "show the tools" }).click();
  await expect(page).toHaveURL(/\/api\/v1\/docs/);

  // The tools' document, rendered by the same bundle: its tag, the catalog and two tools.
  await expect(page.getByRole("link", { name: "Agent tools", exact: true })).toBeVisible();
  for (const [method, path] of [
    ["GET", "tools"],
    ["POST", "tools/search_offerings"],
    ["POST", "tools/book_appointment"],
  ]) {
    await expect(page.locator(`a[href="#agent-tools/tag/agent-tools/${method}/${path}"]`)).toBeVisible();
  }
  await expect(page.getByRole("heading", { name: "Agent tools", level: 2 })).toBeVisible();
  expect(elsewhere).toEqual([]);
  expect(errors.filter((e) => /Content Security Policy|Refused to/.test(e))).toEqual([]);
});

test("api_reference_bundle_is_served_from_this_origin", async ({ request }) => {
  const res = await request.get("/api-reference/standalone.js");
  expect(res.status()).toBe(200);
  expect(res.headers()["content-type"]).toBe("text/javascript; charset=utf-8");
  expect((await res.body()).byteLength).toBeGreaterThan(1_000_000);
});
