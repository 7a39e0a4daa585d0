// A database the service cannot reach answers 503 `internal_error` with Retry-After, and nothing of
// the cause (driver error, address, credentials, SQL) in the body.
import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf } from "../helpers/api";
import { DATABASE_UNAVAILABLE_MESSAGE } from "../../server/lib/database-errors";

beforeAll(() => {
  process.env.DATABASE_URL = "postgresql://nobody:secret-password@127.0.0.1:1/nowhere";
  process.env.SKIP_MIGRATIONS = "1";
});

// It breaks this process's database, so it cannot run against a separate server (API_BASE_URL):
// there the mounts share the handler this in-process run proves.
describe.skipIf(Boolean(process.env.API_BASE_URL))("database unreachable", () => {
  it("503_internal_error_with_retry_after_and_without_detail", async () => {
    const res = await call("GET", "/offerings", { key: `xapk_live_${"ab".repeat(24)}` });
    expect(res.status).toBe(503);
    expect(res.body).toEqual(errorOf("internal_error", DATABASE_UNAVAILABLE_MESSAGE));
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.text).not.toMatch(/ECONNREFUSED|secret-password|prisma|127\.0\.0\.1|nowhere/i);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});
