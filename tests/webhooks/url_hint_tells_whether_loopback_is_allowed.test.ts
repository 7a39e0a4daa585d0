// The dashboard's endpoint URL hint reads the server's own rule: with WEBHOOK_ALLOW_LOOPBACK=1 it
// says loopback targets are allowed (and they are saved), without it that they are refused (and
// the refusal says how to allow them).
import { afterEach, describe, expect, it } from "vitest";
import { dashboardCaller, tenantWithKey } from "../helpers/api";
import { URL_HINT, URL_HINT_LOOPBACK_ALLOWED } from "../../app/dashboard/webhooks/url-hint";

const previous = process.env.WEBHOOK_ALLOW_LOOPBACK;
afterEach(() => {
  if (previous === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  else process.env.WEBHOOK_ALLOW_LOOPBACK = previous;
});

describe("webhooks.targetRules", () => {
  it("loopback_allowed_follows_WEBHOOK_ALLOW_LOOPBACK_and_matches_what_saving_does", async () => {
    const { tenantId } = await tenantWithKey();
    const member = dashboardCaller(tenantId, "member");
    const owner = dashboardCaller(tenantId, "owner");

    process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    expect(await member.webhooks.targetRules()).toEqual({ loopback_allowed: true });
    await expect(owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/hint", events: ["lead.created"] })).resolves.toMatchObject({ enabled: true });

    process.env.WEBHOOK_ALLOW_LOOPBACK = "0";
    expect(await member.webhooks.targetRules()).toEqual({ loopback_allowed: false });
    await expect(owner.webhooks.createSubscription({ url: "http://127.0.0.1:9/hint", events: ["lead.created"] })).rejects.toThrow(
      "invalid field 'url': must be an https URL; to allow loopback targets (http or https on 127.0.0.1, ::1 or localhost) for local testing, run the platform with WEBHOOK_ALLOW_LOOPBACK=1",
    );
  });

  it("the_two_hints_say_opposite_things_about_loopback", () => {
    expect(URL_HINT).toContain("loopback addresses are refused");
    expect(URL_HINT_LOOPBACK_ALLOWED).toContain("allows loopback targets");
    expect(URL_HINT_LOOPBACK_ALLOWED).not.toContain("loopback addresses are refused");
  });
});
