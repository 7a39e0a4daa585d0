// A sync (`PUT /api/inngest`) makes the app register its functions with Inngest, signed with its key.
// The URL it registers, where Inngest then sends every run, is the configured one (PUBLIC_BASE_URL,
// or INNGEST_SERVE_ORIGIN/INNGEST_SERVE_PATH), whatever Host, X-Forwarded-Host or query the PUT carries:
// tests/helpers/inngest-server plays Inngest and records what each sync told it.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inngestServeUrl, inngestServing } from "../../server/webhooks/inngest-endpoint";
import { hashSigningKey } from "../helpers/inngest-server/inngest-server";
import { SIGNING_KEY, startApp } from "./helpers";

/** Not where the test reaches the app: a sync that used the request's address would register something else. */
const PUBLIC_BASE_URL = "https://receptionist.example/platform";
const CONFIGURED = `${PUBLIC_BASE_URL}/api/inngest`;

/** A PUT with headers fetch() will not send as given (Host). */
function put(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "PUT", headers: { "x-inngest-server-kind": "cloud", ...headers } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Every URL a sync told Inngest to call: the app's, then each function's step. */
function registeredUrls(body: { url: string; functions: { steps: Record<string, { runtime: { url: string } }> }[] }) {
  return [body.url, ...body.functions.flatMap((f) => Object.values(f.steps).map((s) => s.runtime.url))];
}

describe("a sync from another host registers only the configured URL", () => {
  let started: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    // No run is triggered here: Inngest never has to reach the public URL.
    started = await startApp("inngest", { PUBLIC_BASE_URL, WEBHOOK_ENGINE: "off" });
  }, 120_000);
  afterAll(async () => {
    await started?.app.stop();
    await started?.inngest?.close();
  });

  it("the_first_sync_registers_PUBLIC_BASE_URL_and_its_path_for_every_function", () => {
    const [sync] = started.inngest!.syncs;
    expect(sync.headers.authorization).toBe(`Bearer ${hashSigningKey(SIGNING_KEY)}`);
    expect(sync.body.url).toBe(CONFIGURED);
    const urls = registeredUrls(sync.body);
    expect(urls).toHaveLength(5); // the app, and four functions (the delivery's failure handler is one)
    for (const url of urls.slice(1))
      expect(url).toMatch(new RegExp(`^${CONFIGURED.replace(/[.?]/g, "\\$&")}\\?fnId=tenant-data-platform-[a-z-]+&stepId=step$`));
  });

  it("a_put_with_a_foreign_host_forwarded_host_or_query_registers_the_same_urls_and_modifies_nothing", async () => {
    const inngest = started.inngest!;
    const first = inngest.syncs[0].body;
    const foreign: [string, string, Record<string, string>][] = [
      ["Host", "/api/inngest", { host: "evil.example:8443" }],
      ["X-Forwarded-Host", "/api/inngest", { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", forwarded: "host=evil.example;proto=https" }],
      ["both", "/api/inngest", { host: "evil.example:8443", "x-forwarded-host": "other.example:9443", "x-forwarded-port": "9443" }],
      ["a query", "/api/inngest?fnId=evil&stepId=evil&url=http://evil.example/", { host: "evil.example" }],
    ];
    for (const [what, path, headers] of foreign) {
      const before = inngest.syncs.length;
      const res = await put(`${started.app.url}${path}`, headers);
      expect(res, what).toEqual({ status: 200, body: { message: "Successfully registered", modified: false } });
      expect(inngest.syncs, what).toHaveLength(before + 1);
      const sync = inngest.syncs[before];
      expect(sync.authorized, what).toBe(true);
      expect(sync.query, what).toBe("");
      expect(registeredUrls(sync.body), what).toEqual(registeredUrls(first));
      expect(sync.body.functions, what).toEqual(first.functions);
    }
    expect(inngest.functions()).toEqual(first.functions);
  });

  it("the_deploy_id_Inngest_passes_on_a_sync_still_reaches_it", async () => {
    const inngest = started.inngest!;
    const before = inngest.syncs.length;
    const res = await put(`${started.app.url}/api/inngest?deployId=deploy-1&fnId=evil`, { host: "evil.example" });
    expect(res.status).toBe(200);
    const sync = inngest.syncs[before];
    expect(sync.query).toBe("?deployId=deploy-1");
    // The SDK carries the deploy id into the URL it registers (as it does without a pinned URL); nothing else.
    expect(sync.body.url).toBe(`${CONFIGURED}?deployId=deploy-1`);
  });
});

describe("the URL registered with Inngest, from the settings", () => {
  it("is_PUBLIC_BASE_URL_with_its_path_then_api_inngest", () => {
    expect(inngestServeUrl({ PUBLIC_BASE_URL: "https://api.example.com" })?.href).toBe("https://api.example.com/api/inngest");
    expect(inngestServeUrl({ PUBLIC_BASE_URL: "https://api.example.com/prefix/" })?.href).toBe("https://api.example.com/prefix/api/inngest");
  });

  it("INNGEST_SERVE_ORIGIN_and_INNGEST_SERVE_PATH_override_it_as_in_Inngest_s_SDK", () => {
    const env = { PUBLIC_BASE_URL: "https://api.example.com/prefix" };
    expect(inngestServeUrl({ ...env, INNGEST_SERVE_ORIGIN: "https://inngest-in.example.com:8443" })?.href).toBe(
      "https://inngest-in.example.com:8443/api/inngest",
    );
    expect(inngestServeUrl({ ...env, INNGEST_SERVE_PATH: "/hooks/inngest" })?.href).toBe("https://api.example.com/hooks/inngest");
  });

  it("without_one_a_dev_server_is_given_the_listen_address_and_anything_else_nothing", () => {
    expect(inngestServeUrl({ INNGEST_DEV: "1", HOST: "0.0.0.0", PORT: "3100" })?.href).toBe("http://127.0.0.1:3100/api/inngest");
    expect(inngestServeUrl({ INNGEST_DEV: "http://localhost:8288", HOST: "::" })?.href).toBe("http://[::1]:3000/api/inngest");
    expect(inngestServeUrl({ INNGEST_SIGNING_KEY: "signkey-prod-1", HOST: "0.0.0.0" })).toBeNull();
    expect(inngestServeUrl({ INNGEST_DEV: "0", INNGEST_SIGNING_KEY: "signkey-prod-1" })).toBeNull();
  });

  it("is_served_only_with_a_signing_key_or_a_dev_server_and_a_url", () => {
    const url = new URL("https://api.example.com/api/inngest");
    expect(inngestServing({ PUBLIC_BASE_URL: "https://api.example.com", INNGEST_SIGNING_KEY: "signkey-prod-1" })).toEqual({ url });
    expect(inngestServing({ PUBLIC_BASE_URL: "https://api.example.com", INNGEST_EVENT_KEY: "k" })).toEqual({
      notServed: "no INNGEST_SIGNING_KEY, and INNGEST_DEV unset",
    });
    expect(inngestServing({ INNGEST_SIGNING_KEY: "signkey-prod-1" })).toEqual({ notServed: "no PUBLIC_BASE_URL or INNGEST_SERVE_ORIGIN to register" });
    expect(inngestServing({ INNGEST_DEV: "1" })).toEqual({ url: new URL("http://127.0.0.1:3000/api/inngest") });
  });
});
