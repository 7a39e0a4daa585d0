// The Retell receiver over real HTTP (a real front process on this worker's database), every
// request signed by retell-sdk's own `sign`: a completed call, a missed call and a call the caller
// abandoned before the assistant spoke each emit exactly their event with the transcript stored; a
// redelivered end stores and emits nothing twice; a missing, wrong or altered signature (401/403),
// an unknown number (404) or a malformed payload (400) writes nothing; B's number never reaches A.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sign } from "retell-sdk/lib/webhook_auth";
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

const PATH = "/api/webhooks/retell";
type Tenant = { tenantId: string; key: string; number: string; apiKey: string };

async function tenantWithRetellNumber(apiKey: string): Promise<Tenant> {
  const { tenantId, key } = await tenantWithKey(["read"]);
  const number = uniqueBusinessNumber();
  await connectChannel(
    scopeToTenant(await getDb(), tenantId),
    { provider: "retell", channel: "voice", address: number, credentials: { api_key: apiKey } },
    OPERATOR,
  );
  return { tenantId, key, number, apiKey };
}

const START = Date.UTC(2026, 10, 21, 9, 0, 0);
let callSeq = 0;

/** A Retell phone call as its webhooks carry it (only the fields this platform reads, plus a few it ignores). */
function retellCall(business: string, customer: string, extra: Record<string, unknown> = {}) {
  return {
    call_type: "phone_call",
    call_id: `call_${process.pid}_${++callSeq}`,
    agent_id: "agent_marina",
    direction: "inbound",
    from_number: customer,
    to_number: business,
    call_status: "ongoing",
    start_timestamp: START,
    ...extra,
  };
}

const conversationTranscript = [
  { role: "agent", content: "Marina Homes, this is Sara. How can I help?", words: [{ word: "Marina", start: 0.6, end: 0.9 }] },
  { role: "user", content: "I'd like to view the Palm villa this week.", words: [{ word: "I'd", start: 4.2, end: 4.4 }] },
  { role: "agent", content: "Tuesday at 1 pm works. Shall I book it?", words: [{ word: "Tuesday", start: 7.5, end: 7.9 }] },
];

function ended(call: ReturnType<typeof retellCall>, extra: Record<string, unknown>) {
  return {
    ...call,
    call_status: "ended",
    end_timestamp: START + 185_000,
    duration_ms: 185_000,
    recording_url: `https://rec.retellai.example/${call.call_id}.wav`,
    ...extra,
  };
}

describe("Retell receiver (real HTTP, signed by retell-sdk)", () => {
  let front: Running;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    a = await tenantWithRetellNumber("key_retell_tenant_a_0001");
    b = await tenantWithRetellNumber("key_retell_tenant_b_0002");
    front = await startReceiverFront({ RATE_LIMIT_PER_KEY: "100000", RATE_LIMIT_PER_TENANT: "100000" });
  });
  afterAll(async () => front?.stop());

  async function post(body: unknown, opts: { apiKey?: string; signature?: string | null; raw?: string } = {}) {
    const raw = opts.raw ?? JSON.stringify(body);
    const headers: Record<string, string> = { "content-type": "application/json" };
    const signature = opts.signature === undefined ? await sign(raw, opts.apiKey ?? a.apiKey) : opts.signature;
    if (signature !== null) headers["x-retell-signature"] = signature;
    const res = await fetch(`${front.url}${PATH}`, { method: "POST", headers, body: raw });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const eventsOfCall = (state: Awaited<ReturnType<typeof tenantState>>, callId: string) =>
    state.events.filter((e) => e.data.object?.provider_call_id === callId).map((e) => e.event);

  it("call_completed_for_an_answered_call_with_transcript_recording_and_summary", async () => {
    const customer = uniquePhone();
    const call = retellCall(a.number, customer);
    expect(await post({ event: "call_started", call })).toEqual({ status: 200, body: { received: true } });
    const end = ended(call, { disconnection_reason: "user_hangup", transcript_object: conversationTranscript });
    expect((await post({ event: "call_ended", call: end })).status).toBe(200);
    expect(
      (await post({ event: "call_analyzed", call: { ...end, call_analysis: { call_summary: "Booked a Palm villa viewing for Tuesday 1 pm." } } })).status,
    ).toBe(200);

    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.call_id)).toEqual(["call.started", "call.completed"]);
    const conversation = state.conversations.find((c) => c.customer_identifier === customer);
    expect(conversation).toMatchObject({ channel: "voice", message_count: 3 });
    expect(state.calls.filter((c) => c.provider_call_id === call.call_id)).toEqual([
      expect.objectContaining({
        conversation_id: conversation.id,
        provider: "retell",
        direction: "inbound",
        status: "completed",
        started_at: new Date(START).toISOString(),
        answered_at: new Date(START).toISOString(),
        ended_at: new Date(START + 185_000).toISOString(),
        duration_seconds: 185,
        end_reason: "user_hangup",
        recording_url: end.recording_url,
        summary: "Booked a Palm villa viewing for Tuesday 1 pm.",
      }),
    ]);
    expect(state.messages.filter((m) => m.conversation_id === conversation.id).map((m) => [m.author, m.body, m.created_at])).toEqual([
      ["assistant", conversationTranscript[0].content, new Date(START + 600).toISOString()],
      ["customer", conversationTranscript[1].content, new Date(START + 4200).toISOString()],
      ["assistant", conversationTranscript[2].content, new Date(START + 7500).toISOString()],
    ]);
  });

  it("call_missed_for_a_caller_who_hung_up_before_the_assistant_spoke", async () => {
    const call = retellCall(a.number, uniquePhone());
    await post({ event: "call_started", call });
    const end = ended(call, { disconnection_reason: "user_hangup", end_timestamp: START + 2_000, duration_ms: 2_000, transcript_object: [] });
    expect((await post({ event: "call_ended", call: end })).status).toBe(200);
    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.call_id)).toEqual(["call.started", "call.missed"]);
    expect(state.calls.find((c) => c.provider_call_id === call.call_id)).toMatchObject({
      status: "missed",
      answered_at: null,
      duration_seconds: 0,
      end_reason: "user_hangup",
    });
  });

  it("call_missed_for_an_outbound_call_nobody_answered_reported_only_at_its_end", async () => {
    const customer = uniquePhone();
    const call = retellCall(a.number, customer, { direction: "outbound", from_number: a.number, to_number: customer });
    expect(
      (await post({ event: "call_ended", call: ended(call, { call_status: "not_connected", disconnection_reason: "dial_no_answer", duration_ms: 0 }) })).status,
    ).toBe(200);
    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.call_id)).toEqual(["call.started", "call.missed"]);
    expect(state.calls.find((c) => c.provider_call_id === call.call_id)).toMatchObject({
      direction: "outbound",
      status: "missed",
      end_reason: "dial_no_answer",
    });
    expect(state.conversations.find((c) => c.customer_identifier === customer)).toMatchObject({ channel: "voice", message_count: 0 });
  });

  it("one_call_completed_and_the_transcript_once_when_the_end_is_delivered_5_times_concurrently", async () => {
    const call = retellCall(a.number, uniquePhone());
    const end = { event: "call_ended", call: ended(call, { disconnection_reason: "agent_hangup", transcript_object: conversationTranscript }) };
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(end)));
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(200));
    const state = await tenantState(front.url, a.key);
    expect(eventsOfCall(state, call.call_id)).toEqual(["call.started", "call.completed"]);
    const conversationId = state.calls.find((c) => c.provider_call_id === call.call_id).conversation_id;
    expect(state.messages.filter((m) => m.conversation_id === conversationId)).toHaveLength(3);
  });

  describe("refused requests write nothing", () => {
    let before: Awaited<ReturnType<typeof tenantState>>;
    beforeAll(async () => {
      before = await tenantState(front.url, a.key);
    });
    const unchanged = async () => expect(await tenantState(front.url, a.key)).toEqual(before);
    const started = () => ({ event: "call_started", call: retellCall(a.number, uniquePhone()) });

    it("401_without_the_signature_header", async () => {
      expect(await post(started(), { signature: null })).toEqual({
        status: 401,
        body: { error: { code: "unauthorized", message: "missing x-retell-signature header" } },
      });
      await unchanged();
    });

    it("403_signed_with_another_key_a_forged_digest_or_replayed_with_an_altered_body", async () => {
      const forbidden = { status: 403, body: { error: { code: "forbidden", message: "x-retell-signature does not verify" } } };
      expect(await post(started(), { apiKey: "key_someone_else" })).toEqual(forbidden);
      expect(await post(started(), { signature: `v=${Date.now()},d=${"0".repeat(64)}` })).toEqual(forbidden);
      const genuine = JSON.stringify(started());
      const signature = await sign(genuine, a.apiKey);
      expect(await post(undefined, { raw: genuine.replace(/"from_number":"\+/, '"from_number":"+1'), signature })).toEqual(forbidden);
      expect(await post(undefined, { raw: genuine.replace('"call_started"', '"call_ended"'), signature })).toEqual(forbidden);
      await unchanged();
    });

    it("404_a_number_no_tenant_has_connected_to_retell", async () => {
      const res = await post({ event: "call_started", call: retellCall(uniqueBusinessNumber(), uniquePhone()) });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      await unchanged();
    });

    it.each([
      ["malformed JSON", '{"event":', "malformed JSON body"],
      ["no call", JSON.stringify({ event: "call_started" }), "missing required field 'call'"],
      [
        "no call_id",
        JSON.stringify({ event: "call_started", call: { ...retellCall("", "+971501234567"), call_id: undefined } }),
        "missing required field 'call.call_id'",
      ],
      ["a blank customer number", JSON.stringify({ event: "call_started", call: retellCall("", " ") }), "invalid field 'call.from_number': must not be blank"],
      [
        "an end before its start",
        JSON.stringify({ event: "call_ended", call: ended(retellCall("", "+971501234567"), { end_timestamp: 0 }) }),
        "invalid field 'call.end_timestamp': must not be before call.start_timestamp",
      ],
      [
        "an end a millisecond before its start",
        JSON.stringify({ event: "call_ended", call: ended(retellCall("", "+971501234567"), { end_timestamp: START - 1 }) }),
        "invalid field 'call.end_timestamp': must not be before call.start_timestamp",
      ],
      [
        "a text start time",
        JSON.stringify({ event: "call_started", call: retellCall("", "+971501234567", { start_timestamp: "yesterday" }) }),
        /^invalid field 'call.start_timestamp'/,
      ],
    ])("400_%s_is_named", async (_what, template, message) => {
      const raw = template.replace('"to_number":""', `"to_number":"${a.number}"`);
      const res = await post(undefined, { raw });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
      if (typeof message === "string") expect(res.body.error.message).toBe(message);
      else expect(res.body.error.message).toMatch(message);
      await unchanged();
    });
  });

  it("cross_tenant_b_s_number_never_lands_data_in_a", async () => {
    const beforeA = await tenantState(front.url, a.key);
    const call = retellCall(b.number, uniquePhone());
    expect((await post({ event: "call_started", call }, { apiKey: a.apiKey })).status).toBe(403);
    expect((await tenantState(front.url, b.key)).calls).toEqual([]);
    expect((await post({ event: "call_started", call }, { apiKey: b.apiKey })).status).toBe(200);
    expect(eventTypes(await tenantState(front.url, b.key))).toEqual(["conversation.created", "call.started"]);
    expect(await tenantState(front.url, a.key)).toEqual(beforeA);
  });
});
