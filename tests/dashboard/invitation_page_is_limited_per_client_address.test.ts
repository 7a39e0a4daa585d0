// The invitation page's procedures need no sign-in, so they are limited per client address (the
// receivers' per-IP layer, RATE_LIMIT_PER_IP, 500 a minute by default): the page cannot be used to
// probe invitation secrets or create accounts in bulk. Each test's client has an address of its own.
import { randomBytes, randomInt } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { handleTrpcRequest } from "../../server/http/trpc-handler";
import { startOfNextWindow } from "../helpers/rate-limit-clock";
import { ORIGIN } from "../helpers/dashboard";

const LIMIT = 500;
const clientAddress = () => `203.0.${randomInt(256)}.${randomInt(1, 255)}`;

/** describe is a POST: the secret travels in the body, never in a URL. */
function describeInvitation(ip: string) {
  return handleTrpcRequest(
    new Request(`${ORIGIN}/api/trpc/dashboard.invitation.describe`, {
      method: "POST",
      headers: { host: "127.0.0.1:3000", origin: ORIGIN, "content-type": "application/json", "x-forwarded-for": ip },
      body: JSON.stringify({ secret: randomBytes(32).toString("base64url") }),
    }),
  );
}

beforeAll(() => openDatabase()); // as the server process does before it serves

describe("the invitation page's public procedures", { timeout: 120_000 }, () => {
  it("429_past_the_per_ip_limit_with_retry_after_while_another_address_is_still_answered", async () => {
    startOfNextWindow();
    const ip = clientAddress();
    for (let i = 0; i < LIMIT; i++) {
      const answer = await describeInvitation(ip);
      if (answer.status !== 200) expect({ i, status: answer.status, body: await answer.text() }).toEqual({ i, status: 200, body: expect.any(String) });
    }
    const refused = await describeInvitation(ip);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await refused.json()).error).toMatchObject({ message: "per-ip rate limit exceeded", data: { appCode: "rate_limited", httpStatus: 429 } });

    const other = await describeInvitation(clientAddress());
    expect(other.status).toBe(200);
    expect((await other.json()).result.data).toMatchObject({ status: "not_found" });
    expect(other.headers.get("x-ratelimit-limit")).toBe(String(LIMIT));
  });
});
