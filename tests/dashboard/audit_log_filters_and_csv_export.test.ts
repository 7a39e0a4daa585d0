// The audit log page's procedures: filters by actor, action and date range, paging within a
// filter, a bounded CSV export whose cells cannot run as formulas, members reading, tenants apart.
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { toAppError } from "../../server/lib/errors";
import { csvCell } from "../../server/audit/audit-log";
import { dashboardCaller, newTenant } from "../helpers/api";

// A user per tenant: the dashboard's per-user rate limit lives in Redis across runs.
const as = (tenantId: string, role: "owner" | "admin" | "member" = "member") => dashboardCaller(tenantId, role, `user-${role}-${tenantId}`);

let tenantId: string;
const entry = (actorLabel: string, action: string, day: string, details: Record<string, string> = {}) => ({
  tenantId,
  actorType: actorLabel === "cli" ? "operator" : "user",
  actorId: actorLabel === "cli" ? null : `id-${actorLabel}`,
  actorLabel,
  action,
  targetType: action.split(".")[0],
  targetId: null,
  details,
  createdAt: new Date(`${day}T12:00:00Z`),
});

beforeAll(async () => {
  ({ id: tenantId } = await newTenant());
  const db = (await openDatabase()).prisma;
  await db.auditLog.createMany({
    data: [
      entry("ann@acme.test", "api_key.issued", "2026-11-01", { name: '=HYPERLINK("http://evil")' }),
      entry("ann@acme.test", "webhook_subscription.created", "2026-11-05"),
      entry("bob@acme.test", "webhook_subscription.deleted", "2026-11-10"),
      entry("cli", "api_key.revoked", "2026-11-20", { name: "@SUM(A1)", note: '-1+2, "quoted"' }),
    ],
  });
  const { id: other } = await newTenant();
  await db.auditLog.create({ data: { ...entry("ann@acme.test", "api_key.issued", "2026-11-02"), tenantId: other } });
});

const actionsOf = (page: { data: { action: string }[] }) => page.data.map((e) => e.action);

describe("audit log filters", () => {
  it("filters_by_actor_substring_or_id_by_exact_action_or_prefix_and_by_inclusive_utc_days", async () => {
    const member = as(tenantId);
    expect(actionsOf(await member.dashboard.auditLog.list({}))).toEqual([
      "api_key.revoked",
      "webhook_subscription.deleted",
      "webhook_subscription.created",
      "api_key.issued",
    ]);
    expect(actionsOf(await member.dashboard.auditLog.list({ actor: "ANN@" }))).toEqual(["webhook_subscription.created", "api_key.issued"]);
    expect(actionsOf(await member.dashboard.auditLog.list({ actor: "id-bob@acme.test" }))).toEqual(["webhook_subscription.deleted"]);
    expect(actionsOf(await member.dashboard.auditLog.list({ action: "api_key.issued" }))).toEqual(["api_key.issued"]);
    expect(actionsOf(await member.dashboard.auditLog.list({ action: "webhook_subscription." }))).toEqual([
      "webhook_subscription.deleted",
      "webhook_subscription.created",
    ]);
    expect(actionsOf(await member.dashboard.auditLog.list({ action: "api_key" }))).toEqual([]);
    expect(actionsOf(await member.dashboard.auditLog.list({ from: "2026-11-05", to: "2026-11-10" }))).toEqual([
      "webhook_subscription.deleted",
      "webhook_subscription.created",
    ]);
    expect(actionsOf(await member.dashboard.auditLog.list({ actor: "ann", from: "2026-11-02" }))).toEqual(["webhook_subscription.created"]);
    expect(await member.dashboard.auditLog.actions()).toEqual([
      "api_key.issued",
      "api_key.revoked",
      "webhook_subscription.created",
      "webhook_subscription.deleted",
    ]);
  });

  it("pages_within_a_filter", async () => {
    const member = as(tenantId);
    const first = await member.dashboard.auditLog.list({ action: "webhook_subscription.", limit: 1 });
    expect(actionsOf(first)).toEqual(["webhook_subscription.deleted"]);
    expect(first.has_more).toBe(true);
    const second = await member.dashboard.auditLog.list({ action: "webhook_subscription.", limit: 1, cursor: first.next_cursor! });
    expect(actionsOf(second)).toEqual(["webhook_subscription.created"]);
    expect(second.has_more).toBe(false);
  });

  it.each([
    [{ from: "2026-13-01" }, "invalid field 'from': must be a real calendar date"],
    [{ from: "yesterday" }, "invalid field 'from': must be a date like 2026-11-23"],
    [{ from: "2026-11-10", to: "2026-11-01" }, "invalid field 'to': must not be before the 'from' date"],
    [{ actor: "x".repeat(201) }, "invalid field 'actor': at most 200 characters"],
  ])("refuses_%j_naming_the_field", async (input, message) => {
    const error = toAppError(
      await as(tenantId)
        .dashboard.auditLog.list(input)
        .catch((e) => e),
    );
    expect(error.errorCode).toBe("bad_request");
    expect(error.message).toBe(message);
  });
});

describe("audit log CSV export", () => {
  it("exports_the_filtered_entries_with_formula_cells_neutralised_and_quoted", async () => {
    const result = await as(tenantId).dashboard.auditLog.exportCsv({ action: "api_key." });
    expect(result).toEqual({ filename: expect.stringMatching(/^audit-log-\d{4}-\d\d-\d\d\.csv$/), csv: expect.any(String), rows: 2, truncated: false });
    expect(result.csv.split("\r\n")).toEqual([
      "created_at,actor_type,actor_id,actor_label,action,target_type,target_id,details",
      `2026-11-20T12:00:00.000Z,operator,,cli,api_key.revoked,api_key,,"{""name"":""@SUM(A1)"",""note"":""-1+2, \\""quoted\\""""}"`,
      `2026-11-01T12:00:00.000Z,user,id-ann@acme.test,ann@acme.test,api_key.issued,api_key,,"{""name"":""=HYPERLINK(\\""http://evil\\"")""}"`,
      "",
    ]);
  });

  it("csv_cells_starting_with_a_formula_character_get_an_apostrophe", () => {
    expect(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "plain", "a,b", 'say "hi"', "", null].map(csvCell)).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@SUM(A1)",
      "'\tx",
      "plain",
      '"a,b"',
      '"say ""hi"""',
      "",
      "",
    ]);
    expect(csvCell("=cmd|' /C calc'!A0,x")).toBe(`"'=cmd|' /C calc'!A0,x"`);
  });

  it("another_tenant_exports_and_lists_only_its_own_entries", async () => {
    const { id: other } = await newTenant();
    const page = await as(other, "owner").dashboard.auditLog.list({});
    expect(page.data).toEqual([]);
    const csv = await as(other, "owner").dashboard.auditLog.exportCsv({});
    expect(csv).toMatchObject({ rows: 0, truncated: false, csv: "created_at,actor_type,actor_id,actor_label,action,target_type,target_id,details\r\n" });
  });
});
