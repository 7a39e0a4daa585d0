// On PostgreSQL the prepared statements (key lookups, hot lists) are pipelined: concurrent requests'
// queries share a connection. With a single statement connection every query of this burst shares
// one, so a reply matched to the wrong query would hand a caller another tenant's rows, or
// authenticate a revoked key. On PGlite the same burst runs through the embedded driver.
process.env.DATABASE_STATEMENT_POOL_SIZE = "1";

import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";

type Caller = { key: string; expectedIds: string[] };
const callers: Caller[] = [];
let revokedKey: string;

beforeAll(async () => {
  for (const count of [3, 7, 25]) {
    const { key, tenantId } = await tenantWithKey();
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    for (let i = 0; i < count; i++) await db.offering.create({ data: { title: `T${count} offering ${i}`, price: "1", priceCurrency: "USD" } as never });
    const rows = await db.offering.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 20, select: { id: true } });
    callers.push({ key, expectedIds: rows.map((r) => r.id) });
  }
  const revoked = await tenantWithKey();
  revokedKey = revoked.key;
  await (await openDatabase()).prisma.apiKey.update({ where: { id: revoked.keyId }, data: { revokedAt: new Date() } });
});

describe("pipelined prepared statements", () => {
  it("200_each_of_150_concurrent_requests_gets_its_own_tenants_page_and_401_for_the_revoked_key", async () => {
    const burst = Array.from({ length: 150 }, (_, i) => (i % 4 === 3 ? null : callers[i % 4]));
    const answers = await Promise.all(burst.map((c) => call("GET", "/offerings?limit=20", { key: c ? c.key : revokedKey })));
    answers.forEach((res, i) => {
      const caller = burst[i];
      if (!caller) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(errorOf("unauthorized", "unknown or revoked api key"));
        return;
      }
      expect(res.status).toBe(200);
      expect(res.body.data.map((o: { id: string }) => o.id)).toEqual(caller.expectedIds);
      expect(res.body.has_more).toBe(caller.expectedIds.length === 20); // only the 25-offering tenant has more
    });
  });
});
