// searchOfferings (the search_offerings tool's service): full text over titles and descriptions,
// Arabic included, case-insensitive, the last word as a prefix, exact attribute filters, active and
// not deleted only, ranked, at most 10, one tenant's offerings only.
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeSqlToTenant } from "../../server/db/tenant-scope";
import { searchOfferings, toPrefixQuery, type SearchOfferingsInput } from "../../server/offerings/offerings.search";
import { call, tenantWithKey } from "../helpers/api";
import { tenantDb } from "../helpers/conversations";

let tenantId: string;
let key: string;
const ids: Record<string, string> = {};

async function offering(name: string, body: Record<string, unknown>, as = key) {
  const res = await call("POST", "/offerings", { key: as, body: { price: 1000, price_currency: "AED", ...body } });
  expect(res.status).toBe(201);
  ids[name] = res.body.id;
  return res.body;
}

async function search(input: SearchOfferingsInput, tenant = tenantId) {
  return (await searchOfferings(scopeSqlToTenant((await openDatabase()).writes, tenant), input)).data;
}
const titles = (rows: { title: string }[]) => rows.map((r) => r.title);

beforeAll(async () => {
  ({ tenantId, key } = await tenantWithKey());
  // Created oldest first: with equal ranks the newest comes first.
  await offering("descOnly", { title: "Townhouse", description: "Near the marina walk", attributes: { bedrooms: 3, furnished: false } });
  await offering("arabic", { title: "Villa", title_ar: "فيلا فاخرة على البحر", description: "Sea view", attributes: { bedrooms: 5 } });
  await offering("studio", { title: "Marina Studio Apartment", description: "Marina view, high floor", attributes: { bedrooms: 0, furnished: true } });
  await offering("twoBed", { title: "Two bedroom APARTMENT", description: "Downtown", attributes: { bedrooms: 2, furnished: true, view: "city" } });
  await offering("reserved", { title: "Marina apartment (reserved)", status: "reserved", attributes: { bedrooms: 2 } });
  await offering("deleted", { title: "Marina apartment (deleted)", attributes: { bedrooms: 2 } });
  await (await tenantDb(tenantId)).offering.update({ where: { id: ids.deleted }, data: { deletedAt: new Date() } });
});

describe("searchOfferings", () => {
  it("finds_an_arabic_title_by_an_arabic_word", async () => {
    expect(titles(await search({ query: "فاخرة" }))).toEqual(["Villa"]);
    expect(titles(await search({ query: "فيلا البحر" }))).toEqual(["Villa"]);
  });

  it("matches_regardless_of_case_and_takes_the_last_word_as_a_prefix", async () => {
    expect(titles(await search({ query: "apartment" }))).toEqual(["Two bedroom APARTMENT", "Marina Studio Apartment"]);
    expect(titles(await search({ query: "MARINA APART" }))).toEqual(["Marina Studio Apartment"]);
    expect(titles(await search({ query: "apart" }))).toEqual(["Two bedroom APARTMENT", "Marina Studio Apartment"]);
    // Only the last word is a prefix: "apart" in the middle must be a whole word.
    expect(await search({ query: "apart marina" })).toEqual([]);
  });

  it("ranks_title_matches_above_description_matches_then_newest_first", async () => {
    // "marina": in the studio's title and description, only in the townhouse's description.
    expect(titles(await search({ query: "marina" }))).toEqual(["Marina Studio Apartment", "Townhouse"]);
    // Equal ranks: the newest first.
    expect(titles(await search({ query: "view" }))).toEqual(["Marina Studio Apartment", "Villa"]);
  });

  it("filters_attributes_by_exact_value", async () => {
    expect(titles(await search({ query: "apartment", attributes: { furnished: true, bedrooms: 2 } }))).toEqual(["Two bedroom APARTMENT"]);
    expect(titles(await search({ attributes: { bedrooms: 3 } }))).toEqual(["Townhouse"]);
    expect(titles(await search({ attributes: { view: "city" } }))).toEqual(["Two bedroom APARTMENT"]);
    // 2 (a number) is not "2" (a string): exact JSON values.
    expect(await search({ attributes: { bedrooms: "2" } })).toEqual([]);
  });

  it("never_returns_inactive_or_deleted_offerings", async () => {
    const all = await search({ limit: 10 });
    expect(titles(all)).toEqual(["Two bedroom APARTMENT", "Marina Studio Apartment", "Villa", "Townhouse"]);
    expect(all.map((o) => o.id)).not.toContain(ids.reserved);
    expect(all.map((o) => o.id)).not.toContain(ids.deleted);
  });

  it("answers_offerings_exactly_as_the_api_shows_them", async () => {
    const [found] = await search({ query: "فاخرة" });
    const shown = await call("GET", `/offerings?limit=100`, { key });
    expect(JSON.stringify(found)).toBe(JSON.stringify(shown.body.data.find((o: { id: string }) => o.id === ids.arabic)));
  });

  it("returns_at_most_limit_best_first_and_five_by_default", async () => {
    const many = await tenantWithKey();
    for (let i = 0; i < 12; i++) {
      const res = await call("POST", "/offerings", { key: many.key, body: { title: `Flat ${i}`, price: 1, price_currency: "AED" } });
      expect(res.status).toBe(201);
    }
    expect(titles(await search({ query: "flat" }, many.tenantId))).toEqual(["Flat 11", "Flat 10", "Flat 9", "Flat 8", "Flat 7"]);
    expect(await search({ query: "flat", limit: 10 }, many.tenantId)).toHaveLength(10);
  });

  it("never_returns_another_tenants_offerings", async () => {
    const other = await tenantWithKey();
    await offering("theirs", { title: "Marina Penthouse Apartment" }, other.key);
    expect(titles(await search({ query: "penthouse" }))).toEqual([]);
    expect(titles(await search({ query: "penthouse" }, other.tenantId))).toEqual(["Marina Penthouse Apartment"]);
    expect((await search({ query: "marina", limit: 10 })).map((o) => o.id)).not.toContain(ids.theirs);
  });

  it("treats_query_syntax_as_plain_words", async () => {
    expect(toPrefixQuery("a & b | !c:* 'd'")).toBe("'a' & 'b' & 'c' & 'd':*");
    expect(toPrefixQuery("!!! ---")).toBeNull();
    expect(await search({ query: "!!! (" })).toEqual([]);
    expect(titles(await search({ query: "marina' | 'x" }))).toEqual([]);
    expect(titles(await search({ query: "  " }))).toHaveLength(4);
  });
});
