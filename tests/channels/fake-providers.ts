// Local fakes of the providers' sending APIs on 127.0.0.1, each checking a request as the real API
// does (path, credentials, content type, required fields) and answering in its documented shapes:
//   Twilio  POST /2010-04-01/Accounts/{AccountSid}/Messages.json, HTTP Basic (SID : auth token),
//           form To/From/Body; 201 with the message's `sid`, errors `{ code, message, more_info, status }`.
//   Graph   POST /{version}/{phone_number_id}/messages, Bearer access token, JSON text message;
//           200 with `messages[0].id` (a wamid), errors `{ error: { message, type, code, fbtrace_id } }`.
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { startFakeServer, type RecordedRequest } from "../helpers/conversations";

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

export type TwilioAccount = { sid: string; token: string; numbers: string[] };

/** Twilio's Messages API for the given accounts. `invalidTo`: numbers it refuses (21211); `slowTo`: answered after `slowMs`. */
export async function startFakeTwilio(opts: { accounts: TwilioAccount[]; invalidTo?: Set<string>; slowTo?: Set<string>; slowMs?: number }) {
  const sids: string[] = [];
  const twilioError = (res: ServerResponse, status: number, code: number, message: string) =>
    json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

  const fake = await startFakeServer((req: RecordedRequest, res) => {
    const path = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/.exec(req.url);
    if (req.method !== "POST" || !path) return twilioError(res, 404, 20404, `The requested resource ${req.url} was not found`);
    const account = opts.accounts.find((a) => a.sid === path[1]);
    const expected = account && `Basic ${Buffer.from(`${account.sid}:${account.token}`).toString("base64")}`;
    if (!expected || req.headers.authorization !== expected) return twilioError(res, 401, 20003, "Authenticate");
    if (!/^application\/x-www-form-urlencoded\b/.test(req.headers["content-type"] ?? "")) return twilioError(res, 400, 20001, "Unsupported content type");
    const form = new URLSearchParams(req.body);
    const [to, from, body] = [form.get("To"), form.get("From"), form.get("Body")];
    if (!to) return twilioError(res, 400, 21604, "A 'To' phone number is required.");
    if (!from) return twilioError(res, 400, 21603, "A 'From' phone number is required.");
    if (!body) return twilioError(res, 400, 21602, "Message body is required.");
    const bare = (n: string) => n.replace(/^whatsapp:/, "");
    if (to.startsWith("whatsapp:") !== from.startsWith("whatsapp:"))
      return twilioError(res, 400, 63007, "Twilio could not find a Channel with the specified From address");
    if (!account.numbers.includes(bare(from)))
      return twilioError(res, 400, 21606, `The From phone number ${from} is not a valid, SMS-capable inbound phone number or short code for your account.`);
    if (!/^\+[1-9]\d{6,14}$/.test(bare(to)) || opts.invalidTo?.has(bare(to))) return twilioError(res, 400, 21211, `Invalid 'To' Phone Number: ${bare(to)}`);
    const sid = `SM${randomBytes(16).toString("hex")}`;
    sids.push(sid);
    const answer = () =>
      json(res, 201, {
        sid,
        account_sid: account.sid,
        to,
        from,
        body,
        status: "queued",
        num_segments: "1",
        direction: "outbound-api",
        api_version: "2010-04-01",
      });
    if (opts.slowTo?.has(bare(to))) setTimeout(answer, opts.slowMs ?? 3000);
    else answer();
  });
  return { ...fake, sids, forTo: (to: string) => fake.received.filter((r) => new URLSearchParams(r.body).get("To")?.endsWith(to)) };
}

export type GraphNumber = { phoneNumberId: string; accessToken: string };

/** WhatsApp Cloud's messages endpoint for the given numbers. `notAllowed`: recipients it refuses (131030). */
export async function startFakeGraph(opts: { version: string; numbers: GraphNumber[]; notAllowed?: Set<string> }) {
  const graphError = (res: ServerResponse, status: number, code: number, message: string, type = "OAuthException") =>
    json(res, status, { error: { message, type, code, fbtrace_id: "AbCdEfGhIjK" } });

  const fake = await startFakeServer((req: RecordedRequest, res) => {
    const path = new RegExp(`^/${opts.version.replace(".", "\\.")}/(\\d+)/messages$`).exec(req.url);
    const number = path && opts.numbers.find((n) => n.phoneNumberId === path[1]);
    if (req.method !== "POST" || !number) return graphError(res, 400, 100, "Unsupported post request.", "GraphMethodException");
    if (req.headers.authorization !== `Bearer ${number.accessToken}`)
      return graphError(res, 401, 190, "Invalid OAuth access token - Cannot parse access token");
    if (!/^application\/json\b/.test(req.headers["content-type"] ?? "")) return graphError(res, 400, 100, "(#100) Invalid parameter");
    let body: any;
    try {
      body = JSON.parse(req.body);
    } catch {
      return graphError(res, 400, 100, "(#100) Invalid parameter");
    }
    if (body?.messaging_product !== "whatsapp") return graphError(res, 400, 100, "(#100) The parameter messaging_product is required.");
    if (typeof body.to !== "string" || !/^\d{7,15}$/.test(body.to)) return graphError(res, 400, 100, "(#100) Invalid parameter", "OAuthException");
    if (body.type !== "text" || typeof body.text?.body !== "string" || !body.text.body)
      return graphError(res, 400, 100, "(#100) The parameter text['body'] is required.");
    if (opts.notAllowed?.has(body.to)) return graphError(res, 400, 131030, "(#131030) Recipient phone number not in allowed list");
    json(res, 200, {
      messaging_product: "whatsapp",
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id: `wamid.${randomBytes(24).toString("base64url")}` }],
    });
  });
  return { ...fake, forTo: (digits: string) => fake.received.filter((r) => r.body.includes(`"to":"${digits}"`)) };
}
