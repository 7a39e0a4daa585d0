// Dead-letter notifications are for a tenant's owners and admins (DECISIONS: "a notification the
// tenant's owners and admins see"). Issue 13 found a read-only member marking them read over
// /api/trpc; over real HTTP through the lean front, a member now gets 403 for both seeing and
// marking, the alert stays unread, and owners and admins still see and mark it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { openDatabase } from "../../server/db/database";
import { newTenant } from "../helpers/api";
import { userInTenant } from "../helpers/dashboard";
import { startMount } from "../helpers/http-mounts";
import { SIGN_IN_ENV, signInOverHttp, trpcErrorOf, trpcOverHttp } from "../dashboard/http-session";

const CANNOT_SEE = "role 'member' cannot see this; an owner or admin can";
const CANNOT_CHANGE = "role 'member' cannot make changes; an owner or admin can";

describe("dead-letter notifications over HTTP (lean front)", () => {
  let mount: Running;
  let notificationId: string;
  const cookies: Record<"owner" | "admin" | "member", string> = { owner: "", admin: "", member: "" };

  beforeAll(async () => {
    const { id: tenantId } = await newTenant();
    const emails = {
      owner: await userInTenant(tenantId, "owner"),
      admin: await userInTenant(tenantId, "admin"),
      member: await userInTenant(tenantId, "member"),
    };
    const note = await (await openDatabase()).prisma.notification.create({
      data: { tenantId, kind: "webhook.dead_letter", title: "Delivery dead-lettered", body: "6 attempts failed", data: { delivery_id: "d-1" } },
    });
    notificationId = note.id;
    mount = await startMount("lean", SIGN_IN_ENV);
    for (const role of ["owner", "admin", "member"] as const) cookies[role] = await signInOverHttp(mount.url, emails[role]);
  });
  afterAll(async () => mount?.stop());

  const unread = (role: keyof typeof cookies) => trpcOverHttp(mount.url, cookies[role], "query", "webhooks.listNotifications", { unread_only: true });

  it("403_a_member_can_neither_see_nor_mark_read_and_the_alert_stays_unread", async () => {
    expect(trpcErrorOf(await unread("member"))).toEqual({ status: 403, code: "forbidden", message: CANNOT_SEE });
    const marked = await trpcOverHttp(mount.url, cookies.member, "mutation", "webhooks.markNotificationRead", { id: notificationId });
    expect(trpcErrorOf(marked)).toEqual({ status: 403, code: "forbidden", message: CANNOT_CHANGE });

    const seenByAdmin = await unread("admin");
    expect(seenByAdmin.status).toBe(200);
    expect(seenByAdmin.body.result.data.data.map((n: { id: string; read_at: string | null }) => [n.id, n.read_at])).toEqual([[notificationId, null]]);
  });

  it("200_owners_and_admins_see_it_and_an_owner_marks_it_read", async () => {
    const seenByOwner = await unread("owner");
    expect(seenByOwner.status).toBe(200);
    expect(seenByOwner.body.result.data.data).toHaveLength(1);

    const marked = await trpcOverHttp(mount.url, cookies.owner, "mutation", "webhooks.markNotificationRead", { id: notificationId });
    expect(marked.status).toBe(200);
    expect(marked.body.result.data).toMatchObject({ id: notificationId, kind: "webhook.dead_letter", read_at: expect.any(String) });

    expect((await unread("admin")).body.result.data.data).toEqual([]);
  });
});
