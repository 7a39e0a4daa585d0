// Twilio Voice status callbacks over real HTTP, signed by the twilio library: a call that never
// reached the assistant (no-answer, busy, failed, or canceled by the caller while it rang) is a
// missed call, recorded once however often Twilio reports it; answered calls are the voice
// assistant's provider's to report, so Twilio's other statuses write nothing; unsigned or altered
// callbacks write nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import type { Running } from "../../../scripts/bench/services";
import { openDatabase } from "../../../server/db/database";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { TWILIO_SID, uniqueBusinessNumber } from "../fixtures";
import { eventTypes, tenantState } from "./api-reader";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const PATH = "/api/webhooks/twilio/voice";
const TOKEN = "auth-token-voice-3333";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
let seq = 0;
const callSid = () => `CA${(Date.now().toString(16) + (++seq).toString(16).padStart(6, "0") + process.pid.toString(16)).padEnd(32, "0").slice(0, 32)}`;

describe("Twilio Voice status callbacks (real HTTP, signed by the twilio library)", () => {
  let front: Running;
  let key: string;
  let number: string;

  beforeAll(async () => {
    const tenant = await tenantWithKey(["read"]);
    key = tenant.key;
    number = uniqueBusinessNumber();
    await connectChannel(
      scopeToTenant((await openDatabase()).prisma, tenant.tenantId),
      {
        provider: "twilio",
        channel: "voice",
        address: number,
        credentials: { account_sid: TWILIO_SID, auth_token: TOKEN },
      },
      OPERATOR,
    );
    front = await startReceiverFront({ PUBLIC_BASE_URL, RATE_LIMIT_PER_KEY: "100000", RATE_LIMIT_PER_TENANT: "100000" });
  });
  afterAll(async () => front?.stop());

  const status = (sid: string, callStatus: string, caller: string) => ({
    CallSid: sid,
    AccountSid: TWILIO_SID,
    From: caller,
    To: number,
    CallStatus: callStatus,
    Direction: "inbound",
    Timestamp: "Sat, 21 Nov 2026 10:00:30 +0000",
    CallbackSource: "call-progress-events",
    SequenceNumber: "0",
  });
  async function post(params: Record<string, string>, signature: string | null = getExpectedTwilioSignature(TOKEN, `${PUBLIC_BASE_URL}${PATH}`, params)) {
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (signature !== null) headers["x-twilio-signature"] = signature;
    const res = await fetch(`${front.url}${PATH}`, { method: "POST", headers, body: new URLSearchParams(params).toString() });
    return { status: res.status, text: await res.text() };
  }

  it.each(["no-answer", "busy", "failed", "canceled"])("call_missed_once_for_a_%s_call_reported_3_times_concurrently", async (callStatus) => {
    const before = await tenantState(front.url, key);
    const caller = uniquePhone();
    const params = status(callSid(), callStatus, caller);
    const answers = await Promise.all(Array.from({ length: 3 }, () => post(params)));
    expect(answers).toEqual(Array.from({ length: 3 }, () => ({ status: 200, text: EMPTY_TWIML })));
    const after = await tenantState(front.url, key);
    expect(eventTypes(after).slice(before.events.length)).toEqual(["conversation.created", "call.started", "call.missed"]);
    expect(after.calls.filter((c) => c.provider_call_id === params.CallSid)).toEqual([
      expect.objectContaining({
        provider: "twilio",
        direction: "inbound",
        status: "missed",
        answered_at: null,
        duration_seconds: 0,
        end_reason: callStatus,
        ended_at: "2026-11-21T10:00:30.000Z",
      }),
    ]);
    expect(after.conversations.find((c) => c.customer_identifier === caller)).toMatchObject({ channel: "voice" });
  });

  it("200_and_nothing_written_for_ringing_in_progress_and_completed_calls", async () => {
    const before = await tenantState(front.url, key);
    const sid = callSid();
    for (const callStatus of ["ringing", "in-progress", "completed"]) {
      expect(await post(status(sid, callStatus, uniquePhone()))).toEqual({ status: 200, text: EMPTY_TWIML });
    }
    expect(await tenantState(front.url, key)).toEqual(before);
  });

  it("401_unsigned_and_403_altered_callbacks_write_nothing", async () => {
    const before = await tenantState(front.url, key);
    const params = status(callSid(), "no-answer", uniquePhone());
    expect((await post(params, null)).status).toBe(401);
    const signature = getExpectedTwilioSignature(TOKEN, `${PUBLIC_BASE_URL}${PATH}`, params);
    expect((await post({ ...params, CallStatus: "busy" }, signature)).status).toBe(403);
    expect((await post(params, getExpectedTwilioSignature("another-token", `${PUBLIC_BASE_URL}${PATH}`, params))).status).toBe(403);
    expect(await tenantState(front.url, key)).toEqual(before);
  });
});
