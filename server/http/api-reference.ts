// The interactive API reference at `/api/v1/docs`, served entirely from this app: the page loads the
// reference UI's standalone bundle from our own origin (app/api-reference/standalone.js), never from a
// CDN, and a Content-Security-Policy keeps the browser from calling any other host (fonts, proxies,
// telemetry). Without JavaScript it still links to the OpenAPI documents. Two documents, chosen in the
// page's document selector (or with `?api=agent-tools`): the tenant API, and the assistant's tools.
// The lean front answers the path with this; app/api/v1/docs/route.ts mounts it for `next dev`/`next start`.
import { AppError, errorBody } from "../lib/errors";

/** Served by app/api-reference/standalone.js/route.ts. */
const REFERENCE_BUNDLE_PATH = "/api-reference/standalone.js";

const DOCUMENTS = [
  { title: "Tenant Data API", slug: "tenant-api", url: "/api/v1/openapi.json", default: true },
  { title: "Agent tools API", slug: "agent-tools", url: "/api/agent/v1/openapi.json" },
];

const configuration = {
  sources: DOCUMENTS,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  hideClientButton: false,
};

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'", // the reference UI injects its styles at run time
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeAttribute = (s: string) => s.replace(/&/g, "&amp;").replace(/'/g, "&#39;").replace(/</g, "&lt;");

const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Tenant Data API reference</title>
  <style>body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}.fallback{padding:8px 16px;font-size:14px;border-bottom:1px solid #e2e8f0}</style>
</head>
<body>
  <p class="fallback">The machine-readable contracts (OpenAPI 3.1): <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>, and the assistant's tools <a href="/api/agent/v1/openapi.json">/api/agent/v1/openapi.json</a> (<a href="/api/v1/docs?api=agent-tools">show the tools</a>).</p>
  <noscript><p class="fallback">The interactive reference needs JavaScript; the OpenAPI documents above have everything it shows.</p></noscript>
  <script id="api-reference" data-configuration='${escapeAttribute(JSON.stringify(configuration))}'></script>
  <script src="${REFERENCE_BUNDLE_PATH}"></script>
</body>
</html>`;

/** GET (and HEAD) the page; any other method 405. */
export async function answerApiReferencePage(req: Request): Promise<Response> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return Response.json(errorBody(new AppError("bad_request", "use GET")), { status: 405, headers: { allow: "GET, HEAD" } });
  }
  return new Response(req.method === "HEAD" ? null : html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "cache-control": "no-cache",
    },
  });
}
