// Messages and conversations created are read from trigger-maintained per-day counters; these
// tests prove the counters follow inserts (single and bulk), deletes (cascades too) and updates.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { call, tenantWithKey } from "../helpers/api";

const DAY = 86_400_000;
const midnight = () => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
};
const at = (daysAgo: number, hour: number) => new Date(midnight() - daysAgo * DAY + hour * 3_600_000);

async function rollup(key: string) {
  const res = await call("GET", "/analytics/weekly-rollup?days=7", { key });
  expect(res.status).toBe(200);
  return res.body;
}

describe("per-day counters behind the rollup", () => {
  it("follow single and bulk inserts, updates and cascading deletes, at UTC day boundaries", async () => {
    const { key, tenantId } = await tenantWithKey(["read"]);
    const db = scopeToTenant((await openDatabase()).prisma, tenantId);
    // 23:59:59.999 two days ago and 00:00 one day ago fall on different UTC days.
    const late = new Date(midnight() - 1 * DAY - 1);
    const a = await db.conversation.create({ data: { channel: "sms", customerIdentifier: "+971501111111", createdAt: late } as never });
    const b = await db.conversation.create({ data: { channel: "webchat", customerIdentifier: "w1", createdAt: at(1, 0) } as never });
    await db.message.createMany({
      data: [
        ...Array.from({ length: 5 }, () => ({
          conversationId: a.id,
          direction: "inbound",
          author: "customer",
          body: "x",
          status: "received",
          createdAt: late,
        })),
        ...Array.from({ length: 3 }, () => ({
          conversationId: b.id,
          direction: "outbound",
          author: "assistant",
          body: "y",
          status: "sent",
          createdAt: at(1, 0),
        })),
        { conversationId: b.id, direction: "inbound", author: "customer", body: "z", status: "received", createdAt: at(0, 1) },
      ] as never,
    });

    let body = await rollup(key);
    const day = (r: any, ago: number) => r.daily[6 - ago];
    expect(day(body, 2).conversations.by_channel.sms).toBe(1);
    expect(day(body, 2).messages).toEqual({ inbound: 5, outbound: 0 });
    expect(day(body, 1).conversations.by_channel.webchat).toBe(1);
    expect(day(body, 1).messages).toEqual({ inbound: 0, outbound: 3 });
    expect(body.totals.messages).toEqual({ inbound: 6, outbound: 3 });
    expect(body.totals.conversations.total).toBe(2);

    // A message moved to another day moves its count.
    const moved = await db.message.findFirst({ where: { conversationId: b.id, direction: "inbound" } });
    await db.message.update({ where: { id: moved!.id }, data: { createdAt: at(3, 5) } });
    body = await rollup(key);
    expect(day(body, 0).messages.inbound).toBe(0);
    expect(day(body, 3).messages.inbound).toBe(1);

    // Deleting a conversation deletes its messages (cascade): both counts drop.
    await db.conversation.deleteMany({ where: { id: a.id } });
    body = await rollup(key);
    expect(day(body, 2).conversations.total).toBe(0);
    expect(day(body, 2).messages).toEqual({ inbound: 0, outbound: 0 });
    expect(body.totals.messages).toEqual({ inbound: 1, outbound: 3 });
    expect(body.totals.conversations.by_channel).toEqual({ voice: 0, sms: 0, whatsapp: 0, webchat: 1, email: 0 });

    // The counters agree with counting the rows themselves.
    const raw = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM messages WHERE tenant_id = ${tenantId}::uuid`;
    expect(raw[0].n).toBe(body.totals.messages.inbound + body.totals.messages.outbound);
  });
});
