// The lean front answers the API paths (/api/v1/*, /api/trpc/*, ...; every route file under app/api:
// tests/http/every_app_api_route_is_served_by_the_lean_front.test.ts) with the shared handlers and
// hands everything else to Next: proven with real HTTP requests against a started server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { mountFor } from "../../server/http/lean-server";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { PASSWORD, userInTenant } from "../helpers/dashboard";
import { requireNextBuild, startMount } from "../helpers/http-mounts";

requireNextBuild();

describe("mountFor: the one routing decision", () => {
  it.each([
    ["/api/v1", "rest"],
    ["/api/v1/offerings", "rest"],
    ["/api/v1/offerings/9b2f0c57-3a4e-4f6e-9d57-1a1f3c1f0a11", "rest"],
    ["/api/v1/openapi.json", "rest"],
    ["/api/v1/docs", "docs"],
    ["/api/v1/docs/", "next"],
    ["/api/v1/offerings/", "next"],
    ["/api/v10/offerings", "next"],
    ["/api/trpc/offerings.list", "trpc"],
    ["/api/trpc", "next"],
    ["/api/inngest", "inngest"],
    ["/api/webhooks/twilio/messaging", "webhooks"],
    ["/api/webhooks/whatsapp/106540352242922", "webhooks"],
    ["/api/webhooks", "next"],
    ["/api/auth/get-session", "auth"],
    ["/api/auth", "next"],
    ["/api/dashboard/export", "export"],
    ["/api/dashboard/export/more", "next"],
    ["/api/dashboard", "next"],
    ["/", "next"],
    ["/dashboard", "next"],
    ["/_next/static/chunk.js", "next"],
    ["/API/v1/offerings", "next"],
    ["/healthz", "probe"],
    ["/readyz", "probe"],
    ["/readyz/", "next"],
    ["/api/v1/readyz", "rest"],
    ["/metrics", "next"],
  ])("%s -> %s", (path, mount) => {
    expect(mountFor(path)).toBe(mount);
  });
});

describe("the lean front over real HTTP (needs `next build`)", () => {
  let server: Running;
  let key: string;
  let email: string;

  beforeAll(async () => {
    // Rows are made before the server starts: on the embedded database it then holds the only opening.
    let tenantId: string;
    ({ key, tenantId } = await tenantWithKey());
    email = await userInTenant(tenantId, "owner");
    const created = await call("POST", "/offerings", { key, body: { title: "Listed", price: "10.50", price_currency: "USD" } });
    expect(created.status).toBe(201);
    server = await startMount("lean");
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(server.url + path, { headers, redirect: "manual" });

  it("answers /api/v1 with the REST bridge: data, rate-limit headers and the echoed request id", async () => {
    const res = await get("/api/v1/offerings?limit=5", { authorization: `Bearer ${key}`, "x-request-id": "lean-1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-request-id")).toBe("lean-1");
    expect(res.headers.get("x-ratelimit-limit")).toBe("200");
    const body = await res.json();
    expect(body.data.map((o: { title: string }) => o.title)).toEqual(["Listed"]);
    expect(body).toMatchObject({ next_cursor: null, has_more: false });
  });

  it("answers unknown /api/v1 paths with the bridge's 404 envelope (not Next's page)", async () => {
    const res = await get("/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(errorOf("not_found", "no endpoint GET /api/v1/nothing-here"));
  });

  it("streams a request body into the bridge (201) and refuses one over 1 MiB (413)", async () => {
    const created = await fetch(server.url + "/api/v1/offerings", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "Streamed", price: 1500.5, price_currency: "USD" }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ title: "Streamed", price: "1500.5" });

    const big = await fetch(server.url + "/api/v1/offerings", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "x".repeat(1024 * 1024 + 10), price: 1, price_currency: "USD" }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual(errorOf("bad_request", "request body exceeds 1 MiB"));
  });

  it("answers /api/trpc with the tRPC handler (a signed-out dashboard call is refused)", async () => {
    const res = await get("/api/trpc/offerings.list?input=%7B%7D");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const body = await res.json();
    expect(body.error.message).toBe("sign in to continue");
  });

  it("answers /api/auth with better-auth itself: a wrong password is 401, a right one a session the dashboard's tRPC accepts", async () => {
    const signIn = (password: string) =>
      fetch(server.url + "/api/auth/sign-in/email", {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.url },
        body: JSON.stringify({ email, password }),
      });
    const refused = await signIn("not the password");
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: "INVALID_EMAIL_OR_PASSWORD" });

    const accepted = await signIn(PASSWORD);
    expect(accepted.status).toBe(200);
    const cookie = accepted.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    expect(cookie).toMatch(/session_token=/);
    const types = await get("/api/trpc/webhooks.eventTypes", { cookie });
    expect(types.status).toBe(200);
    expect((await types.json()).result.data).toContain("booking.created");
  });

  it("hands other paths to Next: the home page, Next's 404 and its trailing-slash redirect; answers the API reference page itself", async () => {
    const home = await get("/");
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toMatch(/^text\/html/);

    const docs = await get("/api/v1/docs");
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/);

    const missing = await get("/no-such-page");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);

    const slash = await get("/api/v1/offerings/");
    expect(slash.status).toBe(308);
    expect(slash.headers.get("location")).toBe("/api/v1/offerings");
  });
});
