// Ingest bench baseline, the physical limit: plain node:http taking Twilio's inbound form and storing
// what ingest stores, with no signature check, validation or Fetch objects: a message to an existing
// conversation in one statement (the conversation locked, the message inserted once, the
// conversation counted: the receiver's own path, server/conversations/ingest.ts), a new customer's
// first message in one raw SQL transaction (the conversation found or created, then the same).
// POST /new (the new-customer section): the first message of a new customer as ONE statement, the
// bare form of what the receiver's statement writes: the conversation (ON CONFLICT DO NOTHING on
// the pair), its `conversation.created` event and one delivery per subscribed endpoint, and the
// message (ON CONFLICT DO NOTHING on the provider id).
// The counter triggers fire as they do for the receiver. Answers the same empty TwiML.
// Env: DATABASE_URL, PORT, BENCH_TENANT_ID, DATABASE_POOL_SIZE (default 10, as the app's pool).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const tenantId = process.env.BENCH_TENANT_ID!;
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

const FIND_OR_CREATE = `WITH inserted AS (
    INSERT INTO conversations (id, tenant_id, channel, customer_identifier, attributes, updated_at)
    VALUES (gen_random_uuid(), $1, 'sms', $2, '{}', now())
    ON CONFLICT (tenant_id, channel, customer_identifier) DO NOTHING RETURNING id)
  SELECT id FROM inserted
  UNION ALL SELECT id FROM conversations WHERE tenant_id = $1 AND channel = 'sms' AND customer_identifier = $2
  LIMIT 1`;
// A racing first message committed the pair after this statement's snapshot: read it again.
const FIND = `SELECT id FROM conversations WHERE tenant_id = $1 AND channel = 'sms' AND customer_identifier = $2`;
const INSERT_MESSAGE = `INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, provider, provider_message_id, created_at)
  VALUES (gen_random_uuid(), $1, $2, 'inbound', 'customer', $3, 'received', 'twilio', $4, now())
  ON CONFLICT (tenant_id, provider, provider_message_id) DO NOTHING RETURNING id`;
const COUNT_MESSAGE = `UPDATE conversations SET last_message_at = now(), last_activity_at = now(), message_count = message_count + 1, updated_at = now()
  WHERE id = $1`;

// The existing conversation's path as one statement; no row when the pair has no conversation yet.
const INTO_EXISTING = `WITH found AS (
    SELECT id FROM conversations WHERE tenant_id = $1 AND channel = 'sms' AND customer_identifier = $2 FOR UPDATE
  ), stored AS (
    INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, provider, provider_message_id, created_at)
    SELECT gen_random_uuid(), $1, found.id, 'inbound', 'customer', $3, 'received', 'twilio', $4, now() FROM found
    ON CONFLICT (tenant_id, provider, provider_message_id) DO NOTHING RETURNING conversation_id
  ), counted AS (
    UPDATE conversations c SET last_message_at = now(), last_activity_at = now(), message_count = c.message_count + 1, updated_at = now()
    FROM stored WHERE c.id = stored.conversation_id RETURNING c.id
  )
  SELECT id FROM counted UNION ALL SELECT id FROM found WHERE NOT EXISTS (SELECT 1 FROM stored)`;

const NEW_CUSTOMER = `WITH created AS (
    INSERT INTO conversations (id, tenant_id, channel, customer_identifier, attributes, last_message_at, last_activity_at, message_count, created_at, updated_at)
    VALUES ($5::uuid, $1, 'sms', $2, '{}', now(), now(), 1, now(), now())
    ON CONFLICT (tenant_id, channel, customer_identifier) DO NOTHING RETURNING id
  ), event AS (
    INSERT INTO events (id, tenant_id, type, data, created_at) SELECT gen_random_uuid(), $1, 'conversation.created', $6::text::jsonb, clock_timestamp() FROM created RETURNING id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (id, tenant_id, subscription_id, event_id)
    SELECT gen_random_uuid(), $1, s.id, event.id FROM event JOIN webhook_subscriptions s ON s.tenant_id = $1 AND s.enabled AND 'conversation.created' = ANY (s.events)
    RETURNING id
  ), stored AS (
    INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, provider, provider_message_id, created_at)
    SELECT gen_random_uuid(), $1, created.id, 'inbound', 'customer', $3, 'received', 'twilio', $4, now() FROM created
    ON CONFLICT (tenant_id, provider, provider_message_id) DO NOTHING RETURNING id
  )
  SELECT (SELECT count(*) FROM stored) AS stored, (SELECT count(*) FROM deliveries) AS deliveries`;

async function storeNew(form: URLSearchParams) {
  const id = randomUUID();
  const at = new Date().toISOString();
  const from = form.get("From");
  const data = JSON.stringify({
    object: {
      id,
      object: "conversation",
      channel: "sms",
      customer_identifier: from,
      customer_name: null,
      status: "open",
      summary: null,
      attributes: {},
      last_message_at: null,
      message_count: 0,
      closed_at: null,
      created_at: at,
      updated_at: at,
    },
  });
  const values = [tenantId, from, form.get("Body") ?? "", form.get("MessageSid"), id, data];
  const { rows } = await pool.query({ name: "new-customer", text: NEW_CUSTOMER, values });
  if (Number(rows[0].stored) !== 1) throw new Error("the new customer's message was not stored");
}

async function store(form: URLSearchParams) {
  const values = [tenantId, form.get("From"), form.get("Body") ?? "", form.get("MessageSid")];
  if ((await pool.query({ name: "into-existing", text: INTO_EXISTING, values })).rowCount) return;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    let { rows } = await client.query({ name: "find-or-create", text: FIND_OR_CREATE, values: [tenantId, form.get("From")] });
    if (!rows.length) ({ rows } = await client.query({ name: "find", text: FIND, values: [tenantId, form.get("From")] }));
    const conversationId = rows[0].id;
    const inserted = await client.query({
      name: "insert-message",
      text: INSERT_MESSAGE,
      values: [tenantId, conversationId, form.get("Body") ?? "", form.get("MessageSid")],
    });
    if (inserted.rowCount) await client.query({ name: "count-message", text: COUNT_MESSAGE, values: [conversationId] });
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    try {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      await (req.url === "/new" ? storeNew(form) : store(form));
      res.writeHead(200, { "content-type": "text/xml", "content-length": Buffer.byteLength(EMPTY_TWIML) }).end(EMPTY_TWIML);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
