// The input bounds (no NUL, no lone surrogate, no number JSON cannot carry back) on the surfaces that
// used to miss them, over real HTTP through the lean front:
//   - the invitation page's public procedures (no sign-in) skipped the check `tenantProcedure` runs:
//     a NUL in `name` was a 500 (PostgreSQL 22021) and a lone surrogate was stored;
//   - `{"attributes":{"big":1e400}}` parsed as Infinity, was written as null and so deleted the key,
//     on PATCH /api/v1/leads/{id}, the upsert_lead tool over REST and over MCP.
// Each is now a 400 naming the field, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { newTenant, newKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";
import { userInTenant } from "../helpers/dashboard";
import { startMount } from "../helpers/http-mounts";
import { answerOf, SIGN_IN_ENV, signInOverHttp, trpcErrorOf, trpcOverHttp } from "../dashboard/http-session";

const NOT_FINITE = "must be a finite number (a JSON number beyond ±1.7976931348623157e308 does not fit a double)";
const bad = (message: string) => ({ error: { code: "bad_request", message } });

let mount: Running;
let cookie: string;
let key: string;
let restConversation: string;
let toolConversation: string;

beforeAll(async () => {
  const tenant = await newTenant("Bounds on every surface");
  ({ key } = await newKey(tenant.id, ["read", "leads:write", "assistant:read"]));
  restConversation = (await makeConversation(tenant.id)).id;
  toolConversation = (await makeConversation(tenant.id)).id;
  const owner = await userInTenant(tenant.id, "owner");
  mount = await startMount("lean", SIGN_IN_ENV);
  cookie = await signInOverHttp(mount.url, owner);
}, 180_000);
afterAll(async () => mount?.stop());

async function rawPost(path: string, body: string, headers: Record<string, string> = {}) {
  return answerOf(
    await fetch(`${mount.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body,
    }),
  );
}

/** The lead as the API lists it. */
async function leadOf(conversationId: string) {
  const res = await fetch(`${mount.url}/api/v1/leads?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  const list = (await res.json()) as { data: { id: string; conversation_id: string; attributes: Record<string, unknown> }[] };
  return list.data.find((l) => l.conversation_id === conversationId);
}

describe("the invitation page's public procedures bound their input", () => {
  const PASSWORD = "a long enough password";
  let secret: string;

  beforeAll(async () => {
    // A new address each run: over HTTP (scripts/test-mounts.sh) both mounts' runs share one database.
    const email = `bounded-invitee-${crypto.randomUUID()}@example.test`;
    const invited = await trpcOverHttp(mount.url, cookie, "mutation", "dashboard.members.invite", { email, role: "member" });
    expect(invited.status).toBe(200);
    secret = new URL(invited.body.result.data.link).hash.replace("#secret=", "");
  });

  /** The accept call as the page's form sends it, the body written as text (so 1e400 stays 1e400). */
  const accept = async (nameJson: string) =>
    answerOf(
      await fetch(`${mount.url}/api/trpc/dashboard.invitation.acceptWithNewAccount`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: mount.url },
        body: `{"secret":"${secret}","name":${nameJson},"password":"${PASSWORD}"}`,
      }),
    );
  const stillPending = async () => {
    const described = await trpcOverHttp(mount.url, "", "mutation", "dashboard.invitation.describe", { secret });
    expect(described.body.result.data).toMatchObject({ status: "pending", has_account: false });
  };

  it("public_procedure_with_nul_answers_400_naming_the_field", async () => {
    const nul = await accept(JSON.stringify("a\u0000b"));
    expect(trpcErrorOf(nul)).toEqual({ status: 400, code: "bad_request", message: "invalid field 'name': must not contain NUL characters" });
    expect(nul.body.error.data.field).toBe("name");
    await stillPending();
  });

  it("public_procedure_with_a_lone_surrogate_answers_400_and_stores_no_account", async () => {
    const lone = await accept('"Jo \\ud800"');
    expect(trpcErrorOf(lone)).toEqual({
      status: 400,
      code: "bad_request",
      message: "invalid field 'name': contains an unpaired surrogate (not valid Unicode)",
    });
    expect(lone.body.error.data.field).toBe("name");
    await stillPending();
  });

  it("public_procedure_with_1e400_answers_400_naming_the_field", async () => {
    const big = await accept("1e400");
    expect(trpcErrorOf(big)).toEqual({ status: 400, code: "bad_request", message: `invalid field 'name': ${NOT_FINITE}` });
    await stillPending();
    // The lookup's input is bounded the same way.
    const lookup = await trpcOverHttp(mount.url, "", "mutation", "dashboard.invitation.describe", { secret: "a\u0000" });
    expect(trpcErrorOf(lookup)).toEqual({ status: 400, code: "bad_request", message: "invalid field 'secret': must not contain NUL characters" });
    // The same invitation is then accepted with a well-formed name.
    const joined = await accept(JSON.stringify("Jo Joiner"));
    expect(joined.status).toBe(200);
    expect(mount.output()).not.toMatch(/22021|trpc error|unhandled error/);
  });
});

describe("a number JSON cannot carry back is refused, never stored as null", () => {
  it("1e400_in_attributes_is_400_naming_the_field_over_rest", async () => {
    const created = await rawPost("/api/v1/leads", JSON.stringify({ conversation_id: restConversation, attributes: { big: 1, keep: "x" } }));
    expect(created.status).toBe(201);
    const id = created.body.id;
    for (const [text, field] of [
      ['{"attributes":{"big":1e400}}', "attributes.big"],
      ['{"attributes":{"big":-1e400}}', "attributes.big"],
      ['{"attributes":{"list":[1,2,1e999]}}', "attributes.list[2]"],
    ]) {
      const res = await answerOf(
        await fetch(`${mount.url}/api/v1/leads/${id}`, {
          method: "PATCH",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: text,
        }),
      );
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: bad(`invalid field '${field}': ${NOT_FINITE}`) });
    }
    expect((await leadOf(restConversation))?.attributes).toEqual({ big: 1, keep: "x" });
  });

  it("1e400_in_attributes_is_400_naming_the_field_through_the_agent_tool_endpoint", async () => {
    const created = await rawPost("/api/agent/v1/tools/upsert_lead", JSON.stringify({ conversation_id: toolConversation, attributes: { big: 1 } }));
    expect(created.status).toBe(200);
    const refused = await rawPost("/api/agent/v1/tools/upsert_lead", `{"conversation_id":"${toolConversation}","attributes":{"big":1e400}}`);
    expect(refused).toMatchObject({ status: 400, body: bad(`invalid field 'attributes.big': ${NOT_FINITE}`) });
    expect((await leadOf(toolConversation))?.attributes).toEqual({ big: 1 });
  });

  it("1e400_in_attributes_is_400_naming_the_field_over_mcp", async () => {
    const message = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upsert_lead","arguments":{"conversation_id":"${toolConversation}","attributes":{"big":-1e400}}}}`;
    const refused = await rawPost("/api/agent/mcp", message, { accept: "application/json, text/event-stream" });
    expect(refused).toMatchObject({ status: 400, body: bad(`invalid field 'params.arguments.attributes.big': ${NOT_FINITE}`) });
    expect((await leadOf(toolConversation))?.attributes).toEqual({ big: 1 });
  });
});
