// Validly signed provider requests whose dates or numbers do not fit what we store, over real HTTP
// (one front process on this worker's database), each signed as its provider signs: they were 500s
// (a RangeError in JavaScript, or PostgreSQL's 22008 "date/time field value out of range", or an
// integer column overflowing). Now each is a 400 naming the field, which the provider does not
// retry forever (docs/channels.md), nothing is stored (no call, no message, no event), and the log
// line names the field and never the value.
import { createHmac } from "node:crypto";
import { sign as retellSign } from "retell-sdk/lib/webhook_auth";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../../scripts/bench/services";
import { openDatabase } from "../../../server/db/database";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { TWILIO_SID, uniqueBusinessNumber, whatsAppNotification } from "../fixtures";
import { tenantState } from "./api-reader";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const TWILIO_TOKEN = "auth-token-bounds-4444";
const RETELL_KEY = "key_retell_bounds_0004";
const VAPI_SECRET = "vapi-hmac-secret-bounds";
const APP_SECRET = "whatsapp-app-secret-bounds";
const START = Date.UTC(2026, 10, 21, 9, 0, 0);
const YEARS = "must be between years 0001 and 9999 (in UTC)";
const TOO_LONG = "a call lasts at most 2147483647 seconds";
const NOT_FINITE = "must be a finite number (a JSON number beyond ±1.7976931348623157e308 does not fit a double)";

let front: Running;
let key: string;
const numbers = { twilio: uniqueBusinessNumber(), retell: uniqueBusinessNumber(), vapi: uniqueBusinessNumber() };
const phoneNumberId = `${Date.now()}${process.pid}`.slice(-15);
let seq = 0;

beforeAll(async () => {
  const tenant = await tenantWithKey(["read"]);
  key = tenant.key;
  const db = scopeToTenant((await openDatabase()).prisma, tenant.tenantId);
  const connect = (provider: "twilio" | "retell" | "vapi" | "whatsapp_cloud", channel: "voice" | "whatsapp", address: string, credentials: object) =>
    connectChannel(db, { provider, channel, address, credentials } as never, OPERATOR);
  await connect("twilio", "voice", numbers.twilio, { account_sid: TWILIO_SID, auth_token: TWILIO_TOKEN });
  await connect("retell", "voice", numbers.retell, { api_key: RETELL_KEY });
  await connect("vapi", "voice", numbers.vapi, { secret: VAPI_SECRET });
  await connect("whatsapp_cloud", "whatsapp", phoneNumberId, { app_secret: APP_SECRET, verify_token: "verify-bounds", access_token: "EAAG-token" });
  front = await startReceiverFront({ PUBLIC_BASE_URL, RATE_LIMIT_PER_KEY: "100000", RATE_LIMIT_PER_TENANT: "100000" });
}, 180_000);
afterAll(async () => front?.stop());

type Answer = { status: number; body: unknown };
const answer = async (res: Response): Promise<Answer> => {
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
};
const refused = (message: string) => ({ status: 400, body: { error: { code: "bad_request", message } } });

/** The log lines of refused webhook requests, parsed, written since `from` characters of output. */
function refusalsLogged(from: number) {
  return front
    .output()
    .slice(from)
    .split("\n")
    .filter((line) => line.includes('"webhook request refused"'))
    .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as Record<string, unknown>);
}

/**
 * Sends one request and proves what a refusal must be: exactly `expected`, nothing stored, and one
 * log line naming the field's reason (never `personal`, the values that would identify a person).
 */
async function expectRefusedAndNothingStored(send: () => Promise<Answer>, expected: Answer, provider: string, personal: string[]) {
  const before = await tenantState(front.url, key);
  const logFrom = front.output().length;
  expect(await send()).toEqual(expected);
  expect(await tenantState(front.url, key)).toEqual(before);
  const reason = (expected.body as { error: { message: string } }).error.message;
  expect(refusalsLogged(logFrom)).toEqual([expect.objectContaining({ level: "warn", provider, status: 400, reason })]);
  const logged = front.output().slice(logFrom);
  for (const value of personal) expect(logged).not.toContain(value);
  expect(logged).not.toMatch(/webhook receiver failed|RangeError|22008/);
}

describe("Twilio Voice: Timestamp outside 0001..9999", () => {
  const PATH = "/api/webhooks/twilio/voice";
  const callback = (timestamp: string, caller: string) => ({
    CallSid: `CA${String(++seq).padStart(6, "0")}${process.pid.toString(16).padStart(26, "0")}`.slice(0, 34),
    AccountSid: TWILIO_SID,
    From: caller,
    To: numbers.twilio,
    CallStatus: "no-answer",
    Direction: "inbound",
    Timestamp: timestamp,
  });
  const post = async (params: Record<string, string>) =>
    answer(
      await fetch(`${front.url}${PATH}`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": getExpectedTwilioSignature(TWILIO_TOKEN, `${PUBLIC_BASE_URL}${PATH}`, params),
        },
        body: new URLSearchParams(params).toString(),
      }),
    );

  it.each(["0000-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "-000001-01-01T00:00:00Z", "Sat, 01 Jan 10000 00:00:00 +0000"])(
    "twilio_voice_timestamp_%s_is_400_naming_the_field_and_stores_nothing",
    async (timestamp) => {
      const caller = uniquePhone();
      await expectRefusedAndNothingStored(() => post(callback(timestamp, caller)), refused(`invalid field 'Timestamp': ${YEARS}`), "twilio", [caller]);
    },
  );

  it("a_timestamp_in_range_is_still_recorded", async () => {
    expect((await post(callback("Sat, 21 Nov 2026 10:00:30 +0000", uniquePhone()))).status).toBe(200);
  });
});

describe("Retell: instants and durations outside what is stored", () => {
  const retellCall = (extra: Record<string, unknown>) => ({
    call_id: `call_bounds_${process.pid}_${++seq}`,
    direction: "inbound",
    from_number: uniquePhone(),
    to_number: numbers.retell,
    call_status: "ended",
    start_timestamp: START,
    end_timestamp: START + 60_000,
    duration_ms: 60_000,
    disconnection_reason: "user_hangup",
    ...extra,
  });
  const transcript = (start: unknown) => [
    { role: "agent", content: "Marina Homes, this is Sara.", words: [{ word: "Marina", start: 0.5 }] },
    { role: "user", content: "I'd like a viewing.", words: [{ word: "I'd", start }] },
  ];
  const post = async (raw: string) =>
    answer(
      await fetch(`${front.url}/api/webhooks/retell`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-retell-signature": await retellSign(raw, RETELL_KEY) },
        body: raw,
      }),
    );
  const ended = (call: ReturnType<typeof retellCall>) => JSON.stringify({ event: "call_ended", call });

  it.each([
    ["a word 1e20 seconds into the call", { transcript_object: transcript(1e20) }, `invalid field 'call.transcript_object[1].words[0].start': ${YEARS}`],
    ["start_timestamp in year 33658", { start_timestamp: 1e15 }, `invalid field 'call.start_timestamp': ${YEARS}`],
    ["end_timestamp past year 9999", { end_timestamp: 253_402_300_800_000 }, `invalid field 'call.end_timestamp': ${YEARS}`],
    ["duration_ms of 1e15", { duration_ms: 1e15 }, `invalid field 'call.duration_ms': ${TOO_LONG}`],
    [
      "an end 8000 years after the start, with no duration_ms",
      { duration_ms: undefined, end_timestamp: 253_402_300_799_000 },
      `invalid field 'call.end_timestamp': ${TOO_LONG}`,
    ],
  ])("retell_%s_is_400_naming_the_field_and_stores_nothing", async (_what, extra, message) => {
    const call = retellCall(extra);
    await expectRefusedAndNothingStored(() => post(ended(call)), refused(message), "retell", [call.from_number, "Marina Homes"]);
  });

  it("retell_1e400_is_400_naming_the_field_and_stores_nothing", async () => {
    const call = retellCall({});
    const raw = ended(call).replace('"duration_ms":60000', '"duration_ms":1e400');
    await expectRefusedAndNothingStored(() => post(raw), refused(`invalid field 'call.duration_ms': ${NOT_FINITE}`), "retell", [call.from_number]);
  });

  it("a_call_in_range_is_still_recorded_with_its_transcript", async () => {
    expect((await post(ended(retellCall({ transcript_object: transcript(4.2) })))).status).toBe(200);
  });
});

describe("Vapi: instants and durations outside what is stored", () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const report = (message: Record<string, unknown>, callExtra: Record<string, unknown> = {}) => {
    const customer = uniquePhone();
    return {
      customer,
      body: {
        message: {
          type: "end-of-call-report",
          timestamp: START + 60_000,
          endedReason: "customer-ended-call",
          startedAt: iso(START),
          endedAt: iso(START + 60_000),
          durationSeconds: 60,
          call: { id: `vapi-bounds-${process.pid}-${++seq}`, type: "inboundPhoneCall", customer: { number: customer }, ...callExtra },
          customer: { number: customer },
          phoneNumber: { number: numbers.vapi },
          artifact: {
            messages: [
              { role: "system", message: "You are Sara.", time: START },
              { role: "bot", message: "Marina Homes, this is Sara.", time: START + 600 },
              { role: "user", message: "I'd like a viewing.", time: START + 4_200 },
            ],
          },
          ...message,
        },
      },
    };
  };
  const post = async (raw: string) =>
    answer(
      await fetch(`${front.url}/api/webhooks/vapi`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-vapi-signature": createHmac("sha256", VAPI_SECRET).update(raw).digest("hex") },
        body: raw,
      }),
    );
  const spoken = (time: number) => ({
    messages: [
      { role: "bot", message: "Marina Homes, this is Sara.", time: START + 600 },
      { role: "user", message: "Hello", secondsFromStart: 2 },
      { role: "user", message: "I'd like a viewing.", time },
    ],
  });

  it.each([
    ["startedAt in year 0000", { startedAt: "0000-01-01T00:00:00Z" }, {}, `invalid field 'message.startedAt': ${YEARS}`],
    ["the call's startedAt in year 0000", { startedAt: undefined }, { startedAt: "0000-01-01T00:00:00Z" }, `invalid field 'message.call.startedAt': ${YEARS}`],
    ["endedAt in year 0000", { endedAt: "0000-12-31T23:59:59Z" }, {}, `invalid field 'message.endedAt': ${YEARS}`],
    ["a transcript time of 1e300", { artifact: spoken(1e300) }, {}, `invalid field 'message.artifact.messages[2].time': ${YEARS}`],
    [
      "secondsFromStart of 1e20",
      { artifact: { messages: [{ role: "user", message: "Hi", secondsFromStart: 1e20 }] } },
      {},
      `invalid field 'message.artifact.messages[0].secondsFromStart': ${YEARS}`,
    ],
    ["durationSeconds of 1e300", { durationSeconds: 1e300 }, {}, `invalid field 'message.durationSeconds': ${TOO_LONG}`],
    [
      "an end 8000 years after the start, with no durationSeconds",
      { durationSeconds: undefined, startedAt: "0001-01-01T00:00:00Z", endedAt: "9999-12-31T00:00:00Z" },
      {},
      `invalid field 'message.endedAt': ${TOO_LONG}`,
    ],
  ])("vapi_%s_is_400_naming_the_field_and_stores_nothing", async (_what, message, callExtra, expected) => {
    const { customer, body } = report(message, callExtra);
    await expectRefusedAndNothingStored(() => post(JSON.stringify(body)), refused(expected), "vapi", [customer, "Marina Homes"]);
  });

  it("vapi_a_status_update_starting_in_year_0000_is_400_and_stores_nothing", async () => {
    const { customer, body } = report({ type: "status-update", status: "in-progress", startedAt: "0000-01-01T00:00:00Z", artifact: undefined });
    await expectRefusedAndNothingStored(() => post(JSON.stringify(body)), refused(`invalid field 'message.startedAt': ${YEARS}`), "vapi", [customer]);
  });

  it("a_report_in_range_is_still_recorded", async () => {
    expect((await post(JSON.stringify(report({}).body))).status).toBe(200);
  });
});

describe("WhatsApp Cloud: a number JSON cannot carry back", () => {
  it("whatsapp_1e400_is_400_naming_the_field_and_stores_nothing", async () => {
    const customer = uniquePhone();
    const raw = JSON.stringify(
      whatsAppNotification(phoneNumberId, {
        messages: [{ from: customer.slice(1), id: `wamid.bounds${++seq}`, timestamp: "1763719200", type: "text", text: { body: "Hello there" } }],
        statuses: [{ id: "wamid.unknown", status: "failed", errors: [{ code: 0, title: "x" }] }],
      }),
    ).replace('"code":0', '"code":1e400');
    const post = async () =>
      answer(
        await fetch(`${front.url}/api/webhooks/whatsapp/${phoneNumberId}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${createHmac("sha256", APP_SECRET).update(raw).digest("hex")}` },
          body: raw,
        }),
      );
    const field = "entry[0].changes[0].value.statuses[0].errors[0].code";
    await expectRefusedAndNothingStored(post, refused(`invalid field '${field}': ${NOT_FINITE}`), "whatsapp_cloud", [customer.slice(1), "Hello there"]);
  });
});
