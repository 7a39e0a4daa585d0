import { describe, expect, it } from "vitest";
import { COMMANDS, runCli } from "../../server/cli/run-cli";
import { openDatabase } from "../../server/db/database";
import { newTenant } from "../helpers/api";
import { sessionCookie, trpc } from "../helpers/dashboard";

describe("operator CLI: user create, member add", () => {
  it("creates a user whose password better-auth accepts, and gives them a role in a tenant", async () => {
    const tenant = await newTenant("CLI tenant");
    const email = `cli-${Date.now()}@example.test`;
    const user = (await COMMANDS["user create"]([], { email, password: "correct horse battery", name: "Cli User" })) as { id: string; email: string };
    expect(user).toMatchObject({ email, name: "Cli User" });
    expect(JSON.stringify(user)).not.toContain("correct horse");

    const member = await COMMANDS["member add"]([], { tenant: tenant.id, "user-email": email, role: "admin" });
    expect(member).toMatchObject({ tenant_id: tenant.id, user_id: user.id, email, role: "admin" });

    const me = await trpc("query", "dashboard.me", undefined, { cookie: await sessionCookie(email) });
    expect(me.data).toMatchObject({ tenant: { id: tenant.id }, role: "admin", user: { email } });

    // Changing the role is the same command.
    await COMMANDS["member add"]([], { tenant: tenant.id, "user-email": email, role: "member" });
    const again = await trpc("query", "dashboard.me", undefined, { cookie: await sessionCookie(email) });
    expect(again.data.role).toBe("member");

    // Each membership change is audited (the operator's); the same role again changes nothing.
    await COMMANDS["member add"]([], { tenant: tenant.id, "user-email": email, role: "member" });
    const audit = await (await openDatabase()).prisma.auditLog.findMany({
      where: { tenantId: tenant.id, targetType: "member" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => [a.action, a.actorType, a.actorLabel, a.targetId, a.details])).toEqual([
      ["member.added", "operator", "cli", (member as { id: string }).id, { email, role: "admin" }],
      ["member.role_changed", "operator", "cli", (member as { id: string }).id, { email, role: "member", previous_role: "admin" }],
    ]);
  });

  it("refuses bad input with usage errors (exit code 2)", async () => {
    expect(await runCli(["user", "create"], { email: "not-an-email", password: "long enough pw" })).toBe(2);
    expect(await runCli(["user", "create"], { email: "short@example.test", password: "short" })).toBe(2);
    expect(await runCli(["member", "add"], { tenant: "not-a-uuid", "user-email": "a@b.c", role: "owner" })).toBe(2);
    expect(await runCli(["member", "add"], { tenant: "00000000-0000-4000-8000-000000000000", "user-email": "nobody@example.test", role: "superuser" })).toBe(2);
    expect(await runCli(["member", "add"], { tenant: "00000000-0000-4000-8000-000000000000", "user-email": "nobody@example.test", role: "owner" })).toBe(2);
  });
});
