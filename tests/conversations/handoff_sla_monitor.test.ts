// The handoff SLA monitor: a conversation in `handoff` whose customer has waited past the tenant's
// handoff_sla_minutes for an operator's first message emits one sla.breached per handoff, however
// many checks (processes, or the Inngest cron) run; a reply within the SLA emits none.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { InngestTestEngine } from "@inngest/test";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { checkHandoffSlas, getHandoffSla, handoffSlaInput, setHandoffSla } from "../../server/conversations/sla-monitor";
import { createLead, requestLeadHandoff } from "../../server/leads/leads.service";
import { sendMessage, updateConversation } from "../../server/conversations/conversations.service";
import { checkHandoffSla } from "../../server/webhooks/inngest-engine";
import { fromZodError } from "../../server/lib/errors";
import { tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, tenantDb } from "../helpers/conversations";

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

/** A tenant whose SLA is one minute, with a conversation handed off `minutesAgo` minutes ago. */
async function handoffStarted(minutesAgo: number, tenantId?: string) {
  tenantId ??= (await tenantWithKey()).tenantId;
  await setHandoffSla(tenantId, { handoff_sla_minutes: 1 });
  const db = await tenantDb(tenantId);
  const conversation = await makeConversation(tenantId);
  const lead = await createLead(db, { conversation_id: conversation.id });
  await requestLeadHandoff(db, { id: lead.id });
  await backdateHandoff(conversation.id, minutesAgo);
  return { tenantId, db, conversation, lead };
}

async function backdateHandoff(conversationId: string, minutesAgo: number) {
  await (await openDatabase()).prisma.$executeRawUnsafe(
    `UPDATE conversations SET handoff_started_at = now() - make_interval(mins => $2::int) WHERE id = $1::uuid`,
    conversationId,
    minutesAgo,
  );
}

async function operatorReply(tenantId: string, conversationId: string, secondsAfterHandoff: number) {
  const message = await sendMessage(await tenantDb(tenantId), { id: conversationId, body: "An agent here, how can I help?" });
  await (await openDatabase()).prisma.$executeRawUnsafe(
    `UPDATE messages SET created_at = (SELECT handoff_started_at FROM conversations WHERE id = $2::uuid) + make_interval(secs => $3::int) WHERE id = $1::uuid`,
    message.id,
    conversationId,
    secondsAfterHandoff,
  );
}

const breaches = (tenantId: string) => eventsOf(tenantId, "sla.breached");

describe("handoff SLA monitor", () => {
  it("a_handoff_past_its_sla_emits_one_sla_breached_with_the_conversation_and_the_wait", async () => {
    const { tenantId, db, conversation } = await handoffStarted(2);
    await Promise.all([checkHandoffSlas(), checkHandoffSlas(), checkHandoffSlas()]);
    await checkHandoffSlas();
    const events = await breaches(tenantId);
    expect(events).toHaveLength(1);
    const row = await db.conversation.findFirstOrThrow({ where: { id: conversation.id } });
    expect(events[0].data).toEqual({
      object: { ...conversation, status: "handoff", updated_at: row.updatedAt.toISOString() },
      waited_seconds: expect.any(Number),
      sla_minutes: 1,
    });
    expect(events[0].data.waited_seconds).toBeGreaterThanOrEqual(120);
    expect(events[0].data.waited_seconds).toBeLessThan(180);
    expect(row.slaBreachedAt).not.toBeNull();
  });

  it("a_handoff_within_its_sla_emits_nothing_yet", async () => {
    const { tenantId, conversation } = await handoffStarted(0);
    await checkHandoffSlas();
    expect(await breaches(tenantId)).toEqual([]);
    // The same handoff once past its SLA does breach: the check above was not what held it back.
    await backdateHandoff(conversation.id, 2);
    await checkHandoffSlas();
    expect(await breaches(tenantId)).toHaveLength(1);
  });

  it("an_operator_reply_within_the_sla_emits_none", async () => {
    const { tenantId, conversation } = await handoffStarted(5);
    await operatorReply(tenantId, conversation.id, 30);
    await checkHandoffSlas();
    expect(await breaches(tenantId)).toEqual([]);
    expect((await (await tenantDb(tenantId)).conversation.findFirstOrThrow({ where: { id: conversation.id } })).slaBreachedAt).toBeNull();
  });

  it("a_late_operator_reply_still_breaches_once_with_the_wait_until_the_reply", async () => {
    const { tenantId, conversation } = await handoffStarted(5);
    await operatorReply(tenantId, conversation.id, 150);
    await checkHandoffSlas();
    const events = await breaches(tenantId);
    expect(events.map((e) => [e.data.waited_seconds, e.data.sla_minutes])).toEqual([[150, 1]]);
  });

  it("a_new_handoff_after_a_reply_can_breach_again", async () => {
    const { tenantId, db, conversation, lead } = await handoffStarted(5);
    await checkHandoffSlas();
    await operatorReply(tenantId, conversation.id, 400);
    await checkHandoffSlas();
    expect(await breaches(tenantId)).toHaveLength(1);
    // Back to the assistant, then handed off again: a new handoff, a new clock.
    await updateConversation(db, { id: conversation.id, status: "open" });
    await requestLeadHandoff(db, { id: lead.id });
    await checkHandoffSlas();
    expect(await breaches(tenantId)).toHaveLength(1);
    await backdateHandoff(conversation.id, 3);
    await checkHandoffSlas();
    await checkHandoffSlas();
    const events = await breaches(tenantId);
    expect(events).toHaveLength(2);
    expect(events[1].data.waited_seconds).toBeGreaterThanOrEqual(180);
  });

  it("a_closed_conversation_does_not_breach", async () => {
    const { tenantId, db, conversation } = await handoffStarted(5);
    await updateConversation(db, { id: conversation.id, status: "closed" });
    await checkHandoffSlas();
    expect(await breaches(tenantId)).toEqual([]);
  });

  it("runs_as_an_inngest_cron_function_with_the_same_once_per_handoff_claim", async () => {
    expect(checkHandoffSla.opts.triggers).toEqual([{ cron: "* * * * *" }]);
    const { tenantId } = await handoffStarted(2);
    const run = () => new InngestTestEngine({ function: checkHandoffSla }).execute();
    const first = await run();
    expect((first.result as { breaches: number }).breaches).toBeGreaterThanOrEqual(1);
    await run();
    expect(await breaches(tenantId)).toHaveLength(1);
  });

  it("the_tenant_setting_defaults_to_15_minutes_and_accepts_1_to_10080", async () => {
    const { tenantId } = await tenantWithKey();
    expect(await getHandoffSla(tenantId)).toEqual({ handoff_sla_minutes: 15 });
    expect(await setHandoffSla(tenantId, { handoff_sla_minutes: 45 })).toEqual({ handoff_sla_minutes: 45 });
    expect(await getHandoffSla(tenantId)).toEqual({ handoff_sla_minutes: 45 });
    for (const bad of [0, 10_081, 2.5]) {
      const parsed = handoffSlaInput.safeParse({ handoff_sla_minutes: bad });
      expect(fromZodError(parsed.error!).message).toBe("invalid field 'handoff_sla_minutes': must be an integer from 1 to 10080");
    }
  });
});

function startCheckProcess(): Promise<{ child: ChildProcess; output: Promise<string> }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve(__dirname, "../helpers/sla-check-process.ts")], {
    env: { ...process.env, LOG_LEVEL: "silent", SKIP_MIGRATIONS: "1" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(child);
  let text = "";
  const output = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => void (text += d.toString()));
    child.once("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`check process exited with ${code}: ${text}`))));
  });
  const ready = new Promise<void>((resolve) => child.stdout!.on("data", () => text.includes("ready") && resolve()));
  return ready.then(() => ({ child, output }));
}

describe.skipIf(!process.env.DATABASE_URL)("handoff SLA monitor in three processes on one PostgreSQL", () => {
  it("each_breached_handoff_emits_exactly_one_sla_breached", async () => {
    const { tenantId } = await tenantWithKey();
    const conversations = [];
    for (let i = 0; i < 30; i++) conversations.push((await handoffStarted(2, tenantId)).conversation);
    const processes = await Promise.all([startCheckProcess(), startCheckProcess(), startCheckProcess()]);
    for (const { child } of processes) child.stdin!.write("go\n");
    const outputs = await Promise.all(processes.map((p) => p.output));
    const claimed = outputs.map((out) => Number(/claimed (\d+)/.exec(out)![1]));
    expect(claimed.reduce((a, b) => a + b, 0)).toBe(30);

    const events = await breaches(tenantId);
    expect(events).toHaveLength(30);
    expect(new Set(events.map((e) => e.data.object.id))).toEqual(new Set(conversations.map((c) => c.id)));
  });
});
