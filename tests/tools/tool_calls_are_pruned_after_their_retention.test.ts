// tool_calls records are kept 7 days (TOOL_CALL_RETENTION_MS) and then pruned: a repeat within the
// retention still answers the first result, a repeat after the pruning acts again. The pruning
// runs on the shared periodic-job helper, whose stop waits for a run in progress.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { pruneToolCalls, startToolCallPruning, TOOL_CALL_RETENTION_MS } from "../../server/tools/tool-calls";
import { startPeriodicJob } from "../../server/lib/periodic-job";
import { tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { makeConversation, tenantDb } from "../helpers/conversations";

const DAY = 86_400_000;

async function recordedCalls(tenantId: string) {
  const rows = await (await tenantDb(tenantId)).toolCall.findMany({ select: { toolCallId: true }, orderBy: { toolCallId: "asc" } });
  return rows.map((r) => r.toolCallId);
}

async function backdate(tenantId: string, toolCallId: string, ageMs: number) {
  await (await openDatabase()).prisma.toolCall.updateMany({ where: { tenantId, toolCallId }, data: { createdAt: new Date(Date.now() - ageMs) } });
}

describe("tool_calls pruning", () => {
  it("the_retention_is_7_days", () => {
    expect(TOOL_CALL_RETENTION_MS).toBe(7 * DAY);
  });

  it("records_older_than_the_retention_are_pruned_and_their_ids_act_again_while_younger_ones_still_answer_the_first_result", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    const csat = (id: string) => callTool(key, "record_csat", { conversation_id: conversation.id, score: 5, tool_call_id: id });
    const old = await csat("call_8_days_old");
    const recent = await csat("call_6_days_old");
    expect([old.status, recent.status]).toEqual([200, 200]);
    await backdate(tenantId, "call_8_days_old", 8 * DAY);
    await backdate(tenantId, "call_6_days_old", 6 * DAY);

    expect(await pruneToolCalls()).toBeGreaterThanOrEqual(1);
    expect(await recordedCalls(tenantId)).toEqual(["call_6_days_old"]);

    // Within the retention a repeat answers the first result; after the pruning the id acts again.
    const repeatRecent = await csat("call_6_days_old");
    expect(repeatRecent.text).toBe(recent.text);
    const repeatOld = await csat("call_8_days_old");
    expect(repeatOld.status).toBe(200);
    expect(repeatOld.body.id).not.toBe(old.body.id);
    expect(await (await tenantDb(tenantId)).csatResponse.count()).toBe(3);
    expect(await recordedCalls(tenantId)).toEqual(["call_6_days_old", "call_8_days_old"]);
  });

  it("the_periodic_job_prunes_in_the_background", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId);
    await callTool(key, "record_csat", { conversation_id: conversation.id, score: 3, tool_call_id: "call_old" });
    await backdate(tenantId, "call_old", TOOL_CALL_RETENTION_MS + 60_000);
    const job = startToolCallPruning(25);
    try {
      await expect.poll(() => recordedCalls(tenantId), { timeout: 10_000, interval: 50 }).toEqual([]);
    } finally {
      await job.stop();
    }
  });

  it("stopping_a_periodic_job_waits_for_its_run_in_progress", async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const job = startPeriodicJob("test job", 5, async () => {
      order.push("run started");
      started();
      await held;
      order.push("run ended");
    });
    await running;
    const stopped = job.stop().then(() => order.push("stopped"));
    // Let every callback already due run: a stop that did not wait would resolve here.
    await new Promise((resolve) => setImmediate(resolve));
    order.push("released");
    release();
    await stopped;
    expect(order).toEqual(["run started", "released", "run ended", "stopped"]);
  });
});
