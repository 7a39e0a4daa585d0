// Issues 43 and 44: one route list for both fronts. `/api/dashboard/export` used to fall through the
// lean front's list to Next, whose route bundle (a second copy of the server's modules) started the
// server process again: background jobs twice, with METRICS_PORT `listen EADDRINUSE` and a 500 on every
// later export, and on the embedded database a second writer on the same directory (a session made
// after the first export refused by the export, exports missing from the audit log). Every route file
// under app/api is now answered by the lean front itself; this test derives the list from app/api, so a
// route added later fails here until the lean front serves it.
import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Running } from "../../scripts/bench/services";
import { mountFor } from "../../server/http/lean-server";
import { STARTED_BY_ANOTHER_COPY } from "../../server/http/startup";
import { errorOf, tenantWithKey } from "../helpers/api";
import { userInTenant } from "../helpers/dashboard";
import { ROOT, startMount } from "../helpers/http-mounts";
import { SIGN_IN_ENV, signInOverHttp, trpcOverHttp } from "../dashboard/http-session";

/** A request path each route file under app/api answers: dynamic segments filled in with samples. */
function appApiRoutes(): { file: string; path: string }[] {
  const dir = path.join(ROOT, "app", "api");
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => /(^|\/)route\.(ts|tsx|js)$/.test(f))
    .map((file) => {
      const segments = path
        .dirname(file)
        .split(path.sep)
        .filter((s) => s !== "." && !/^\(.*\)$/.test(s)) // route groups are not in the URL
        .flatMap((s) => (/^\[\[?\.\.\./.test(s) ? ["a", "b"] : /^\[.*\]$/.test(s) ? ["sample"] : [s]));
      return { file: `app/api/${file}`, path: ["/api", ...segments].join("/") };
    })
    .sort((x, y) => x.path.localeCompare(y.path));
}

describe("the route list", () => {
  it("every_route_file_under_app_api_is_served_by_the_lean_front_never_handed_to_next", () => {
    const routes = appApiRoutes();
    // The walk found the route files (a wrong directory would prove nothing).
    expect(routes.map((r) => r.path)).toEqual(
      expect.arrayContaining(["/api/v1", "/api/v1/docs", "/api/dashboard/export", "/api/trpc/sample", "/api/auth/a/b"]),
    );
    const handedToNext = routes.filter((r) => mountFor(r.path) === "next");
    expect(handedToNext).toEqual([]);
  });
});

describe("the lean front over real HTTP, with METRICS_PORT (needs `next build`)", () => {
  let server: Running;
  let owner: string;
  let tenantId: string;

  beforeAll(async () => {
    // Rows are made before the server starts: on the embedded database it then holds the only opening.
    ({ tenantId } = await tenantWithKey());
    owner = await userInTenant(tenantId, "owner");
    server = await startMount("lean", { ...SIGN_IN_ENV, LOG_LEVEL: "info", METRICS_PORT: String(await freePort()) });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  const exportAs = (cookie?: string) => fetch(`${server.url}/api/dashboard/export`, { headers: cookie ? { cookie } : {} });
  const times = (text: string) => server.output().split(text).length - 1;

  it("the_owners_export_is_answered_by_the_lean_front_and_the_server_process_starts_once", async () => {
    // Signed out, twice (the second used to answer an empty 500 once the second start failed).
    for (let i = 0; i < 2; i++) {
      const res = await exportAs();
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.json()).toEqual(errorOf("unauthorized", "sign in to continue"));
    }
    // A session made after the first export is the export's too (one database behind both).
    const cookie = await signInOverHttp(server.url, owner);
    const exported: { resource: string; data: { action?: string } }[][] = [];
    for (let i = 0; i < 2; i++) {
      const res = await exportAs(cookie);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
      exported.push(
        (await res.text())
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l)),
      );
    }
    expect(exported[0][0]).toMatchObject({ resource: "export", data: { tenant_id: tenantId } });
    // Each download carries its own audit entry and the ones before; the dashboard's audit log has both.
    const exportsIn = (lines: { data: { action?: string } }[]) => lines.filter((l) => l.data.action === "tenant.exported").length;
    expect(exported.map(exportsIn)).toEqual([1, 2]);
    const audit = await trpcOverHttp(server.url, cookie, "query", "dashboard.auditLog.list", {});
    expect(audit.status).toBe(200);
    expect(audit.body.result.data.data.filter((e: { action: string }) => e.action === "tenant.exported")).toHaveLength(2);

    // One start in the process: one webhook engine, one metrics listener, no second copy refused.
    expect(times('"server process ready"')).toBe(1);
    expect(times('"webhook engine: embedded worker"')).toBe(1);
    expect(server.output()).not.toContain("EADDRINUSE");
    expect(server.output()).not.toContain(STARTED_BY_ANOTHER_COPY);
  });

  it("every_route_under_app_api_answers_from_the_lean_front_and_the_reference_page_still_works", async () => {
    for (const route of appApiRoutes()) {
      const res = await fetch(server.url + route.path, { redirect: "manual" });
      // Whatever each handler answers a bare GET, it is not Next's HTML page or its refusal of a second copy.
      const html = res.headers.get("content-type")?.startsWith("text/html") ?? false;
      expect({ route: route.path, html }).toEqual({ route: route.path, html: route.path === "/api/v1/docs" });
      expect(await res.text()).not.toContain("internal server error");
    }
    const docs = await fetch(`${server.url}/api/v1/docs?api=agent-tools`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(docs.headers.get("content-security-policy")).toMatch(/^default-src 'none'; script-src 'self';/);
    expect(await docs.text()).toContain('<script src="/api-reference/standalone.js"></script>');
    const bundle = await fetch(`${server.url}/api-reference/standalone.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    await bundle.arrayBuffer();
    const post = await fetch(`${server.url}/api/v1/docs`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(await post.json()).toEqual(errorOf("bad_request", "use GET"));

    expect(times('"server process ready"')).toBe(1);
    expect(server.output()).not.toContain(STARTED_BY_ANOTHER_COPY);
  });
});
