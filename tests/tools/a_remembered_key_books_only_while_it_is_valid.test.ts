// book_appointment confirms the caller's API key in its one statement, so a key this process has
// looked up before is not looked up again (server/auth/authenticate.ts). These prove that saves
// nothing a lookup would refuse: a key revoked, or a tenant suspended, by someone else (a direct
// write, as another process would make it) books nothing on the very next call and answers what the
// lookup answers; a wrong secret under a known prefix is a 401.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { errorOf, tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { tenantDb } from "../helpers/conversations";
import { MESSAGES } from "../../server/lib/errors";

let slot = 0;
const booking = (toolCallId?: string) => {
  const start = Date.UTC(2031, 0, 1) + slot++ * 3_600_000;
  return {
    customer_name: "Ali Reza",
    customer_phone: "+971501234567",
    scheduled_start: new Date(start).toISOString(),
    scheduled_end: new Date(start + 1_800_000).toISOString(),
    ...(toolCallId ? { tool_call_id: toolCallId } : {}),
  };
};

const appointmentsOf = async (tenantId: string) => (await tenantDb(tenantId)).appointment.count();

describe("book_appointment with a remembered key", () => {
  it("401_a_key_revoked_elsewhere_books_nothing_on_the_next_call", async () => {
    const { tenantId, key } = await tenantWithKey();
    expect((await callTool(key, "book_appointment", booking())).status).toBe(200);
    expect((await callTool(key, "book_appointment", booking("remembered-1"))).status).toBe(200);
    // Revoked by another process: this one still remembers the key.
    await (await openDatabase()).prisma.apiKey.updateMany({ where: { tenantId }, data: { revokedAt: new Date() } });
    const refused = await callTool(key, "book_appointment", booking("after-revoke"));
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(errorOf("unauthorized", MESSAGES.unknownKey));
    expect(await appointmentsOf(tenantId)).toBe(2);
    expect(await (await tenantDb(tenantId)).toolCall.count()).toBe(1);
    // And it stays refused (forgotten, looked up again each time).
    expect((await callTool(key, "book_appointment", booking())).status).toBe(401);
    expect(await appointmentsOf(tenantId)).toBe(2);
  });

  it("403_a_tenant_suspended_elsewhere_books_nothing_and_books_again_once_resumed", async () => {
    const { tenantId, key } = await tenantWithKey();
    expect((await callTool(key, "book_appointment", booking())).status).toBe(200);
    const db = (await openDatabase()).prisma;
    await db.tenant.update({ where: { id: tenantId }, data: { suspendedAt: new Date() } });
    const refused = await callTool(key, "book_appointment", booking());
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(errorOf("forbidden", MESSAGES.tenantSuspended));
    expect(await appointmentsOf(tenantId)).toBe(1);
    await db.tenant.update({ where: { id: tenantId }, data: { suspendedAt: null } });
    expect((await callTool(key, "book_appointment", booking())).status).toBe(200);
    expect(await appointmentsOf(tenantId)).toBe(2);
  });

  it("401_a_wrong_secret_under_a_remembered_prefix", async () => {
    const { tenantId, key } = await tenantWithKey();
    expect((await callTool(key, "book_appointment", booking())).status).toBe(200);
    // Same lookup prefix, another secret: the remembered hash does not match, and neither does the stored one.
    const last = key.at(-1) === "0" ? "1" : "0";
    const forged = await callTool(`${key.slice(0, -1)}${last}`, "book_appointment", booking());
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual(errorOf("unauthorized", MESSAGES.unknownKey));
    expect(await appointmentsOf(tenantId)).toBe(1);
  });

  it("a_repeated_tool_call_id_after_the_revocation_is_refused_too_not_answered_from_its_record", async () => {
    const { tenantId, key } = await tenantWithKey();
    const first = await callTool(key, "book_appointment", booking("once"));
    expect(first.status).toBe(200);
    await (await openDatabase()).prisma.apiKey.updateMany({ where: { tenantId }, data: { revokedAt: new Date() } });
    const repeat = await callTool(key, "book_appointment", booking("once"));
    expect(repeat.status).toBe(401);
    expect(repeat.body).toEqual(errorOf("unauthorized", MESSAGES.unknownKey));
  });
});
