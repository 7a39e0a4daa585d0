import { beforeAll, describe, expect, it } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";

let key: string;
let tenantId: string;
const TOTAL = 45;
let expectedOrder: string[];

beforeAll(async () => {
  ({ key, tenantId } = await tenantWithKey());
  const db = scopeToTenant((await openDatabase()).prisma, tenantId);
  // Ties on the sort key: groups of five offerings share one created_at, so only the id breaks them.
  const base = Date.UTC(2026, 0, 1);
  await db.offering.createMany({
    data: Array.from({ length: TOTAL }, (_, i) => ({
      title: `Offering ${i}`,
      price: "10",
      priceCurrency: "USD",
      createdAt: new Date(base + Math.floor(i / 5) * 1000),
    })) as never,
  });
  const rows = await db.offering.findMany({ select: { id: true, createdAt: true } });
  expectedOrder = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((r) => r.id);
});

async function collect(limit: number) {
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await call("GET", `/offerings?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, { key });
    expect(res.status).toBe(200);
    pages.push(res.body);
    cursor = res.body.next_cursor;
  } while (cursor);
  return pages;
}

describe("GET /offerings keyset pagination", () => {
  it("walks_every_row_once_in_order_across_ties", async () => {
    const pages = await collect(20);
    expect(pages.map((p) => p.data.length)).toEqual([20, 20, 5]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, false]);
    expect(pages[2].next_cursor).toBeNull();
    expect(pages[0].next_cursor).toBe(pages[0].data[19].id);
    expect(pages.flatMap((p) => p.data.map((o: any) => o.id))).toEqual(expectedOrder);
  });

  it("page_size_default_20_and_cap_100", async () => {
    expect((await call("GET", "/offerings", { key })).body.data).toHaveLength(20);
    const capped = await call("GET", "/offerings?limit=1000", { key });
    expect(capped.status).toBe(200);
    expect(capped.body.data).toHaveLength(TOTAL);
    expect(capped.body.has_more).toBe(false);
  });

  it("exact_page_boundary_has_no_empty_trailing_page", async () => {
    const pages = await collect(15);
    expect(pages.map((p) => p.data.length)).toEqual([15, 15, 15]);
    expect(pages[2].has_more).toBe(false);
  });

  it.each(["0", "-1", "1.5", "abc", ""])("400_invalid_limit_%j_names_limit", async (limit) => {
    const res = await call("GET", `/offerings?limit=${limit}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'limit': must be an integer from 1 to 100"));
  });

  it("400_limit_given_twice", async () => {
    const res = await call("GET", "/offerings?limit=5&limit=6", { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'limit': given more than once"));
  });

  it.each(["not-a-uuid", "00000000-0000-4000-8000-000000000000"])("400_cursor_%s_is_not_of_this_list", async (cursor) => {
    const res = await call("GET", `/offerings?cursor=${cursor}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorOf("bad_request", "invalid field 'cursor': not a cursor of this list"));
  });

  it("soft_deleted_rows_are_excluded_but_a_soft_deleted_cursor_still_continues", async () => {
    const { key: k, tenantId: t } = await tenantWithKey();
    const db = scopeToTenant((await openDatabase()).prisma, t);
    for (let i = 0; i < 6; i++) {
      await call("POST", "/offerings", { key: k, body: { title: `o${i}`, price: 1, price_currency: "USD" } });
    }
    const first = await call("GET", "/offerings?limit=3", { key: k });
    const cursor = first.body.next_cursor;
    await db.offering.updateMany({ where: { id: cursor }, data: { deletedAt: new Date() } });
    const second = await call("GET", `/offerings?limit=3&cursor=${cursor}`, { key: k });
    expect(second.status).toBe(200);
    expect(second.body.data).toHaveLength(3);
    const all = await call("GET", "/offerings?limit=100", { key: k });
    expect(all.body.data.map((o: any) => o.id)).not.toContain(cursor);
    expect(all.body.data).toHaveLength(5);
  });

  it("lists_only_the_keys_tenant", async () => {
    const other = await tenantWithKey();
    await call("POST", "/offerings", { key: other.key, body: { title: "theirs", price: 1, price_currency: "USD" } });
    const mine = await call("GET", "/offerings?limit=100", { key });
    expect(mine.body.data.map((o: any) => o.title)).not.toContain("theirs");
  });
});
