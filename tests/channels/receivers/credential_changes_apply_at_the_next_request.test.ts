// The receivers keep decrypted credentials in memory (server/channels/channel-connections.ts), yet a
// connection's change applies to the very next request in every server process: new credentials
// (the old signature is refused, the new one accepted) and a disabled connection (404, nothing
// stored). The change is made through one front's dashboard procedures; on PostgreSQL a second front
// process, which had used the old credentials, is asked too (the embedded database allows one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import type { Running } from "../../../scripts/bench/services";
import { openDatabase } from "../../../server/db/database";
import { scopeToTenant } from "../../../server/db/tenant-scope";
import { connectChannel } from "../../../server/channels/channel-connections";
import { OPERATOR } from "../../../server/audit/record-audit";
import { tenantWithKey } from "../../helpers/api";
import { userInTenant } from "../../helpers/dashboard";
import { uniquePhone } from "../../helpers/conversations";
import { startReceiverFront } from "../../helpers/receiver-front";
import { SIGN_IN_ENV, signInOverHttp, trpcOverHttp } from "../../dashboard/http-session";
import { TWILIO_SID, uniqueBusinessNumber } from "../fixtures";
import { tenantState } from "./api-reader";

const PUBLIC_BASE_URL = "https://hooks.receptionist.example";
const PATH = "/api/webhooks/twilio/messaging";
const OLD_TOKEN = "auth-token-before-the-change-3a9f";
const NEW_TOKEN = "auth-token-after-the-change-7d21";

let sidCounter = 0;
const newSid = () => `SM${(Date.now().toString(16) + (++sidCounter).toString(16).padStart(6, "0") + process.pid.toString(16)).padEnd(32, "0").slice(0, 32)}`;

describe("a channel connection's change applies at the next request, in every front process", () => {
  const fronts: Running[] = [];
  let tenant: { tenantId: string; key: string };
  let connectionId: string;
  let cookie: string;
  const number = uniqueBusinessNumber();

  beforeAll(async () => {
    tenant = await tenantWithKey(["read"]);
    const email = await userInTenant(tenant.tenantId, "admin");
    const db = scopeToTenant((await openDatabase()).prisma, tenant.tenantId);
    const connected = await connectChannel(
      db,
      { provider: "twilio", channel: "sms", address: number, credentials: { account_sid: TWILIO_SID, auth_token: OLD_TOKEN } },
      OPERATOR,
    );
    connectionId = connected.id;
    const env = { ...SIGN_IN_ENV, PUBLIC_BASE_URL };
    fronts.push(await startReceiverFront(env));
    if (process.env.DATABASE_URL) fronts.push(await startReceiverFront(env));
    cookie = await signInOverHttp(fronts[0]!.url, email);
  });
  afterAll(async () => {
    await Promise.all(fronts.map((front) => front.stop()));
  });

  /** An inbound SMS to the connected number, signed with `token` as Twilio signs it. */
  async function postInbound(front: Running, token: string): Promise<number> {
    const params = { MessageSid: newSid(), AccountSid: TWILIO_SID, From: uniquePhone(), To: number, Body: "Is the flat still free?", SmsStatus: "received" };
    const res = await fetch(`${front.url}${PATH}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": getExpectedTwilioSignature(token, `${PUBLIC_BASE_URL}${PATH}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    await res.text();
    return res.status;
  }

  async function updateConnection(change: Record<string, unknown>) {
    const answer = await trpcOverHttp(fronts[0]!.url, cookie, "mutation", "channels.update", { id: connectionId, ...change });
    expect(answer.status).toBe(200);
  }

  const storedMessages = async () => (await tenantState(fronts[0]!.url, tenant.key)).messages.length;

  it("403_with_the_old_auth_token_and_200_with_the_new_one_right_after_the_credentials_change", async () => {
    for (const front of fronts) expect(await postInbound(front, OLD_TOKEN)).toBe(200);
    const before = await storedMessages();

    await updateConnection({ credentials: { account_sid: TWILIO_SID, auth_token: NEW_TOKEN } });

    for (const front of fronts) {
      expect(await postInbound(front, OLD_TOKEN)).toBe(403);
      expect(await postInbound(front, NEW_TOKEN)).toBe(200);
    }
    expect(await storedMessages()).toBe(before + fronts.length);
  });

  it("404_right_after_the_connection_is_disabled_and_200_again_once_it_is_active", async () => {
    for (const front of fronts) expect(await postInbound(front, NEW_TOKEN)).toBe(200);
    const before = await storedMessages();

    await updateConnection({ status: "disabled" });
    for (const front of fronts) expect(await postInbound(front, NEW_TOKEN)).toBe(404);
    expect(await storedMessages()).toBe(before);

    await updateConnection({ status: "active" });
    for (const front of fronts) expect(await postInbound(front, NEW_TOKEN)).toBe(200);
    expect(await storedMessages()).toBe(before + fronts.length);
  });
});
