// The Vapi receiver over real HTTP (a real front process on this worker's database), every request
// signed as Vapi's HMAC server credential signs it (HMAC-SHA256 of the raw body with the secret,
// hex, in x-vapi-signature): a completed call, a call the caller abandoned before the assistant
// spoke and an outbound call nobody answered each emit exactly their event with the transcript
// stored; a redelivered end report stores and emits nothing twice; a missing, wrong or altered
// signature (401/403), an unknown number (404) or a malformed payload (400) writes nothing; tenant
// B's number never lands data in A.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../../scripts/bench/services";
import { getDb } from "../../../server/db/client";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { uniqueBusinessNumber } from "../fixtures";
import { eventTypes, tenantState } from "./api-reader";

const PATH = "/api/webhooks/vapi";
type Tenant = { tenantId: string; key: string; number: string; secret: string };

async function tenantWithVapiNumber(secret: string): Promise<Tenant> {
  const { tenantId, key } = await tenantWithKey(["read"]);
  const number = uniqueBusinessNumber();
  await connectChannel(scopeToTenant(await getDb(), tenantId), { provider: "vapi", channel: "voice", address: number, credentials: { secret } }, OPERATOR);
  return { tenantId, key, number, secret };
}

const START = Date.UTC(2026, 10, 21, 9, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
let callSeq = 0;

/** A Vapi phone call as its server messages carry it (the fields this platform reads, plus some it ignores). */
function vapiCall(business: string, customer: string, type = "inboundPhoneCall") {
  return {
    id: `c0ffee00-0000-4000-8000-${String(process.pid).padStart(6, "0")}${String(++callSeq).padStart(6, "0")}`,
    orgId: "org_marina",
    type,
    status: "in-progress",
    startedAt: iso(START),
    phoneNumberId: "pn_1",
    customer: { number: customer },
    phoneNumber: { number: business },
  };
}
type Call = ReturnType<typeof vapiCall>;

const envelope = (call: Call, message: Record<string, unknown>) => ({
  message: { timestamp: START, call, customer: call.customer, phoneNumber: { id: "pn_1", provider: "twilio", number: call.phoneNumber.number }, ...message },
});
const statusUpdate = (call: Call, status: string) => envelope(call, { type: "status-update", status });

const spoken = [
  { role: "system", message: "You are Sara, the receptionist of Marina Homes.", time: START, secondsFromStart: 0 },
  { role: "bot", message: "Marina Homes, this is Sara. How can I help?", time: START + 600, secondsFromStart: 0.6 },
  { role: "user", message: "I'd like to view the Palm villa this week.", time: START + 4200, secondsFromStart: 4.2 },
  { role: "bot", message: "Tuesday at 1 pm works. Shall I book it?", time: START + 7500, secondsFromStart: 7.5 },
];

function endOfCallReport(call: Call, extra: { endedReason: string; messages?: unknown[]; endedAt?: number; durationSeconds?: number }) {
  return envelope(call, {
    type: "end-of-call-report",
    endedReason: extra.endedReason,
    startedAt: iso(START),
    endedAt: iso(extra.endedAt ?? START + 185_000),
    durationSeconds: extra.durationSeconds ?? 185,
    cost: 0.21,
    artifact: { messages: extra.messages ?? spoken, transcript: "AI: …", recordingUrl: `https://storage.vapi.example/${call.id}.wav` },
    analysis: { summary: "Booked a Palm villa viewing for Tuesday 1 pm.", successEvaluation: "true" },
  });
}

const sign = (raw: string, secret: string) => createHmac("sha256", secret).update(raw).digest("hex");

describe("Vapi receiver (real HTTP, HMAC-signed as Vapi's credential signs)", () => {
  let front: Running;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    a = await tenantWithVapiNumber("vapi-hmac-secret-of-tenant-a");
    b = await tenantWithVapiNumber("vapi-hmac-secret-of-tenant-b");
    front = await startReceiverFront({ RATE_LIMIT_PER_KEY: "100000", RATE_LIMIT_PER_TENANT: "100000" });
  });
  afterAll(async () => front?.stop());

  async function post(body: unknown, opts: { secret?: string; signature?: string | null; raw?: string } = {}) {
    const raw = opts.raw ?? JSON.stringify(body);
    const headers: Record<string, string> = { "content-type": "application/json" };
    const signature = opts.signature === undefined ? sign(raw, opts.secret ?? a.secret) : opts.signature;
    if (signature !== null) headers["x-vapi-signature"] = signature;
    const res = await fetch(`${front.url}${PATH}`, { method: "POST", headers, body: raw });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const eventsOfCall = (state: Awaited<ReturnType<typeof tenantState>>, callId: string) =>
    state.events.filter((e) => e.data.object?.provider_call_id === callId).map((e) => e.event);

  it("call_completed_for_an_answered_call_with_transcript_recording_and_summary", async () => {
    const customer = uniquePhone();
    const call = vapiCall(a.number, customer);
    expect(await post(statusUpdate(call, "in-progress"))).toEqual({ status: 200, body: { received: true } });
    // A transcript update during the call changes nothing; the end report carries the whole transcript.
    expect((await post(envelope(call, { type: "transcript", role: "user", transcriptType: "final", transcript: "Hello" }))).status).toBe(200);
    expect((await post(endOfCallReport(call, { endedReason: "customer-ended-call" }))).status).toBe(200);

    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.id)).toEqual(["call.started", "call.completed"]);
    const conversation = state.conversations.find((c) => c.customer_identifier === customer);
    expect(conversation).toMatchObject({ channel: "voice", message_count: 3 });
    expect(state.calls.filter((c) => c.provider_call_id === call.id)).toEqual([
      expect.objectContaining({
        conversation_id: conversation.id,
        provider: "vapi",
        direction: "inbound",
        status: "completed",
        started_at: iso(START),
        answered_at: iso(START),
        ended_at: iso(START + 185_000),
        duration_seconds: 185,
        end_reason: "customer-ended-call",
        recording_url: `https://storage.vapi.example/${call.id}.wav`,
        summary: "Booked a Palm villa viewing for Tuesday 1 pm.",
      }),
    ]);
    expect(state.messages.filter((m) => m.conversation_id === conversation.id).map((m) => [m.author, m.body, m.created_at])).toEqual([
      ["assistant", spoken[1]!.message, iso(START + 600)],
      ["customer", spoken[2]!.message, iso(START + 4200)],
      ["assistant", spoken[3]!.message, iso(START + 7500)],
    ]);
  });

  it("call_missed_for_a_caller_who_hung_up_before_the_assistant_spoke", async () => {
    const call = vapiCall(a.number, uniquePhone());
    await post(statusUpdate(call, "in-progress"));
    expect(
      (await post(endOfCallReport(call, { endedReason: "customer-ended-call", messages: [spoken[0]], endedAt: START + 2_000, durationSeconds: 2 }))).status,
    ).toBe(200);
    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.id)).toEqual(["call.started", "call.missed"]);
    expect(state.calls.find((c) => c.provider_call_id === call.id)).toMatchObject({
      status: "missed",
      answered_at: null,
      duration_seconds: 0,
      end_reason: "customer-ended-call",
    });
  });

  it("call_missed_for_an_outbound_call_nobody_answered_reported_only_at_its_end", async () => {
    const customer = uniquePhone();
    const call = vapiCall(a.number, customer, "outboundPhoneCall");
    expect((await post(endOfCallReport(call, { endedReason: "customer-did-not-answer", messages: [], durationSeconds: 0 }))).status).toBe(200);
    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.id)).toEqual(["call.started", "call.missed"]);
    expect(state.calls.find((c) => c.provider_call_id === call.id)).toMatchObject({
      direction: "outbound",
      status: "missed",
      end_reason: "customer-did-not-answer",
    });
    expect(state.conversations.find((c) => c.customer_identifier === customer)).toMatchObject({ channel: "voice", message_count: 0 });
  });

  it("one_call_completed_and_the_transcript_once_when_the_end_report_is_delivered_5_times_concurrently", async () => {
    const call = vapiCall(a.number, uniquePhone());
    const report = endOfCallReport(call, { endedReason: "assistant-ended-call" });
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(report)));
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(200));
    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.id)).toEqual(["call.started", "call.completed"]);
    const conversationId = state.calls.find((c) => c.provider_call_id === call.id).conversation_id;
    expect(state.messages.filter((m) => m.conversation_id === conversationId)).toHaveLength(3);
  });

  describe("refused requests write nothing", () => {
    let before: Awaited<ReturnType<typeof tenantState>>;
    beforeAll(async () => {
      before = await tenantState(front.url, a.key);
    });
    const unchanged = async () => expect(await tenantState(front.url, a.key)).toEqual(before);
    const started = () => statusUpdate(vapiCall(a.number, uniquePhone()), "in-progress");

    it("401_without_the_signature_header", async () => {
      expect(await post(started(), { signature: null })).toEqual({
        status: 401,
        body: { error: { code: "unauthorized", message: "missing x-vapi-signature header" } },
      });
      await unchanged();
    });

    it("403_signed_with_another_secret_a_forged_digest_or_replayed_with_an_altered_body", async () => {
      const forbidden = { status: 403, body: { error: { code: "forbidden", message: "x-vapi-signature does not verify" } } };
      expect(await post(started(), { secret: "someone-elses-secret" })).toEqual(forbidden);
      expect(await post(started(), { signature: "0".repeat(64) })).toEqual(forbidden);
      const genuine = JSON.stringify(started());
      const signature = sign(genuine, a.secret);
      expect(await post(undefined, { raw: genuine.replace(/"customer":\{"number":"\+/, '"customer":{"number":"+1'), signature })).toEqual(forbidden);
      expect(await post(undefined, { raw: genuine.replace('"in-progress","startedAt"', '"ended","startedAt"'), signature })).toEqual(forbidden);
      // The same digest with Vapi's optional `sha256=` prefix verifies.
      expect((await post(undefined, { raw: genuine, signature: `sha256=${signature}` })).status).toBe(200);
      before = await tenantState(front.url, a.key);
    });

    it("404_a_number_no_tenant_has_connected_to_vapi", async () => {
      const res = await post(statusUpdate(vapiCall(uniqueBusinessNumber(), uniquePhone()), "in-progress"));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      await unchanged();
    });

    it.each([
      ["malformed JSON", '{"message":', "malformed JSON body"],
      ["no message", JSON.stringify({ type: "status-update" }), "missing required field 'message'"],
      [
        "a web call without a number",
        JSON.stringify({ message: { type: "status-update", status: "in-progress", call: { id: "web-1", type: "webCall" } } }),
        "invalid field 'message.phoneNumber.number': not a phone number in E.164 (web calls have no number)",
      ],
      [
        "no call id",
        JSON.stringify({
          message: { type: "status-update", status: "in-progress", phoneNumber: { number: "BUSINESS" }, customer: { number: "+971501234567" }, call: {} },
        }),
        "missing required field 'message.call.id'",
      ],
      [
        "no customer number",
        JSON.stringify({
          message: {
            type: "status-update",
            status: "in-progress",
            phoneNumber: { number: "BUSINESS" },
            customer: { number: " " },
            call: { id: "c-1" },
          },
        }),
        "missing required field 'message.customer.number'",
      ],
      [
        "a text timestamp",
        JSON.stringify({
          message: {
            type: "status-update",
            status: "in-progress",
            timestamp: "yesterday",
            phoneNumber: { number: "BUSINESS" },
            customer: { number: "+971501234567" },
            call: { id: "c-2" },
          },
        }),
        /^invalid field 'message.timestamp'/,
      ],
      [
        "an end before its start",
        JSON.stringify(endOfCallReport(vapiCall("BUSINESS", "+971501234567"), { endedReason: "customer-ended-call", endedAt: START - 1 })),
        "invalid field 'message.endedAt': must not be before the call's startedAt",
      ],
    ])("400_%s_is_named", async (_what, template, message) => {
      const res = await post(undefined, { raw: template.replaceAll("BUSINESS", a.number) });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
      if (typeof message === "string") expect(res.body.error.message).toBe(message);
      else expect(res.body.error.message).toMatch(message);
      await unchanged();
    });
  });

  it("cross_tenant_b_s_number_never_lands_data_in_a", async () => {
    const beforeA = await tenantState(front.url, a.key);
    const started = statusUpdate(vapiCall(b.number, uniquePhone()), "in-progress");
    expect((await post(started, { secret: a.secret })).status).toBe(403);
    expect((await tenantState(front.url, b.key)).calls).toEqual([]);
    expect((await post(started, { secret: b.secret })).status).toBe(200);
    expect(eventTypes(await tenantState(front.url, b.key))).toEqual(["conversation.created", "call.started"]);
    expect(await tenantState(front.url, a.key)).toEqual(beforeA);
  });
});
