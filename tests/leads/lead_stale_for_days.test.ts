// GET /leads?stale_for_days=N: qualified leads whose conversation's last activity (last message, or
// creation) is more than N days old.
import { beforeAll, describe, expect, it } from "vitest";
import { call, tenantWithKey } from "../helpers/api";
import { makeConversation, tenantDb } from "../helpers/conversations";

const DAY = 24 * 3600 * 1000;

describe("GET /leads?stale_for_days=N", () => {
  let tenantId: string;
  let key: string;
  const ids: Record<string, string> = {};

  /** A lead in `status` on its own conversation, quiet for `quietDays`. */
  async function lead(name: string, status: string, quietDays: number) {
    const conversation = await makeConversation(tenantId);
    const created = (await call("POST", "/leads", { key, body: { conversation_id: conversation.id, notes: name } })).body;
    if (status !== "new") await call("PATCH", `/leads/${created.id}`, { key, body: { status } });
    const db = await tenantDb(tenantId);
    await db.conversation.updateMany({ where: { id: conversation.id }, data: { lastActivityAt: new Date(Date.now() - quietDays * DAY) } });
    ids[name] = created.id;
    return { conversation, lead: created };
  }

  beforeAll(async () => {
    ({ tenantId, key } = await tenantWithKey());
    await lead("qualified-quiet-10d", "qualified", 10);
    await lead("qualified-quiet-4d", "qualified", 4);
    await lead("qualified-active", "qualified", 0);
    await lead("new-quiet-10d", "new", 10);
    await lead("booked-quiet-10d", "booked", 10);
    for (let i = 0; i < 4; i++) await lead(`qualified-quiet-30d-${i}`, "qualified", 30);
    // Another tenant's stale qualified lead never shows up.
    const other = await tenantWithKey();
    const theirs = await makeConversation(other.tenantId);
    const theirLead = (await call("POST", "/leads", { key: other.key, body: { conversation_id: theirs.id } })).body;
    await call("PATCH", `/leads/${theirLead.id}`, { key: other.key, body: { status: "qualified" } });
    await (await tenantDb(other.tenantId)).conversation.updateMany({ data: { lastActivityAt: new Date(Date.now() - 90 * DAY) } });
  });

  const notesOf = (res: { body: { data: { notes: string }[] } }) => res.body.data.map((l) => l.notes).sort();

  it("keeps only qualified leads quiet for more than N days", async () => {
    const week = await call("GET", "/leads?stale_for_days=7", { key });
    expect(week.status).toBe(200);
    expect(notesOf(week)).toEqual(["qualified-quiet-10d", "qualified-quiet-30d-0", "qualified-quiet-30d-1", "qualified-quiet-30d-2", "qualified-quiet-30d-3"]);
    const threeDays = await call("GET", "/leads?stale_for_days=3", { key });
    expect(notesOf(threeDays)).toContain("qualified-quiet-4d");
    expect(notesOf(threeDays)).not.toContain("qualified-active");
    const month = await call("GET", "/leads?stale_for_days=60", { key });
    expect(month.body).toEqual({ data: [], next_cursor: null, has_more: false });
  });

  it("paginates the filtered list", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await call("GET", `/leads?stale_for_days=7&limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key });
      pages++;
      seen.push(...res.body.data.map((l: { notes: string }) => l.notes));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(["qualified-quiet-10d", "qualified-quiet-30d-0", "qualified-quiet-30d-1", "qualified-quiet-30d-2", "qualified-quiet-30d-3"]);
  });

  it("a new message makes the conversation active again", async () => {
    const { conversation } = await lead("revived", "qualified", 20);
    expect(notesOf(await call("GET", "/leads?stale_for_days=7", { key }))).toContain("revived");
    await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "Still interested?" } });
    expect(notesOf(await call("GET", "/leads?stale_for_days=7", { key }))).not.toContain("revived");
  });

  it("without the filter every lead is listed (there is no status filter)", async () => {
    const all = await call("GET", "/leads?limit=100&status=qualified", { key });
    expect(all.body.data.length).toBe(Object.keys(ids).length);
  });
});
