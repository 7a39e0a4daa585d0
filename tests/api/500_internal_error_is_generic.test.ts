// A failure the service did not anticipate (here: the database is unreachable) answers a bare
// 500 `internal_error`, with nothing of the cause in the body.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf } from "../helpers/api";

beforeAll(() => {
  process.env.DATABASE_URL = "postgresql://nobody:secret-password@127.0.0.1:1/nowhere";
  process.env.SKIP_MIGRATIONS = "1";
});

// It breaks this process's database, so it cannot run against a separate server (API_BASE_URL):
// there the mounts share the handler this in-process run proves.
describe.skipIf(Boolean(process.env.API_BASE_URL))("500", () => {
  it("500_internal_error_without_detail", async () => {
    const res = await call("GET", "/offerings", { key: `xapk_live_${"ab".repeat(24)}` });
    expect(res.status).toBe(500);
    expect(res.body).toEqual(errorOf("internal_error", "internal server error"));
    expect(res.text).not.toMatch(/ECONNREFUSED|secret-password|prisma|127\.0\.0\.1/i);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});
