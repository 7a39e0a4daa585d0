// SIGTERM while the server's handoff SLA check is claiming a breach: the process stops taking
// requests, waits for the claim (its transaction, its sla.breached) and only then closes the
// database and exits 0. The claim is held mid-way by a row lock this test takes on the
// conversation, on a PostgreSQL cluster of the test's own (no other process checks SLAs there).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { setHandoffSla } from "../../server/conversations/sla-monitor";
import { createLead, requestLeadHandoff } from "../../server/leads/leads.service";
import { tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, tenantDb } from "../helpers/conversations";
import { startMount } from "../helpers/http-mounts";
import { moveToOwnCluster } from "../helpers/postgres-server";

/** A handoff started five minutes ago, within its tenant's 60-minute SLA (a one-minute SLA breaches it). */
async function handoffFiveMinutesAgo() {
  const { tenantId } = await tenantWithKey();
  await setHandoffSla(tenantId, { handoff_sla_minutes: 60 });
  const db = await tenantDb(tenantId);
  const conversation = await makeConversation(tenantId);
  await requestLeadHandoff(db, { id: (await createLead(db, { conversation_id: conversation.id })).id });
  await (await openDatabase()).prisma.$executeRawUnsafe(
    `UPDATE conversations SET handoff_started_at = now() - interval '5 minutes' WHERE id = $1::uuid`,
    conversation.id,
  );
  return { tenantId, conversationId: conversation.id };
}

/** Server connections waiting on a lock in the breach claim (the UPDATE of sla-monitor.ts). */
async function claimsWaitingOnALock(): Promise<number> {
  const rows = await (await openDatabase()).prisma.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%SET sla_breached_at = now()%'`,
  );
  return rows[0].n;
}

const listening = (url: string) =>
  fetch(`${url}/api/v1`, { signal: AbortSignal.timeout(2000) }).then(
    () => true,
    () => false,
  );

describe.skipIf(!process.env.DATABASE_URL)(
  "shutdown with an SLA check in progress (PostgreSQL: the check is held by a row lock from another connection)",
  () => {
    let own: Awaited<ReturnType<typeof moveToOwnCluster>>;
    beforeAll(async () => {
      own = await moveToOwnCluster();
    }, 120_000);
    afterAll(async () => own?.restore());

    it("sigterm_waits_for_the_claim_in_progress_then_exits_0_with_its_one_sla_breached", { timeout: 120_000 }, async () => {
      const { tenantId, conversationId } = await handoffFiveMinutesAgo();
      // First the server (starting a mount closes this process's client, which the lock needs).
      const server = await startMount("lean", { SLA_CHECK_INTERVAL_MS: "100", SHUTDOWN_TIMEOUT_MS: "60000" });
      const exited = new Promise<number | null>((resolve) => server.proc.once("exit", (code) => resolve(code)));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const holder = (await openDatabase()).prisma.$transaction(
        async (tx) => {
          await tx.$queryRawUnsafe(`SELECT id FROM conversations WHERE id = $1::uuid FOR UPDATE`, conversationId);
          locked();
          await released;
        },
        { timeout: 90_000 },
      );
      await lockTaken;
      try {
        // The SLA shortened: the breach is due, and the server's claim waits for the locked row.
        await setHandoffSla(tenantId, { handoff_sla_minutes: 1 });
        await expect.poll(claimsWaitingOnALock, { timeout: 30_000, interval: 100 }).toBe(1);
        server.proc.kill("SIGTERM");
        // It stops taking requests, and still waits: the process is up and its claim still waiting.
        await expect.poll(() => listening(server.url), { timeout: 30_000, interval: 100 }).toBe(false);
        expect(await claimsWaitingOnALock()).toBe(1);
        expect(server.proc.exitCode).toBeNull();
        expect(await eventsOf(tenantId, "sla.breached")).toEqual([]);

        release();
        await holder;
        expect(await exited).toBe(0);
        const breaches = await eventsOf(tenantId, "sla.breached");
        expect(breaches).toHaveLength(1);
        expect(breaches[0].data).toMatchObject({ object: { id: conversationId, status: "handoff" }, sla_minutes: 1 });
        expect(server.output()).not.toContain("handoff SLA check failed");
      } finally {
        release();
        await holder.catch(() => {});
        if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
      }
    });
  },
);
