// Ingest bench baseline, the physical limit: plain node:http taking Twilio's inbound form and storing
// what ingest stores, with no signature check, validation or Fetch objects: a message to an existing
// conversation in one statement (the conversation locked, the message inserted once, the
// conversation counted: the receiver's own path, server/conversations/ingest.ts), a new customer's
// first message in one raw SQL transaction (the conversation found or created, then the same).
// The counter triggers fire as they do for the receiver. Answers the same empty TwiML.
// Env: DATABASE_URL, PORT, BENCH_TENANT_ID, DATABASE_POOL_SIZE (default 10, as the app's pool).
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
      await store(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(200, { "content-type": "text/xml", "content-length": Buffer.byteLength(EMPTY_TWIML) }).end(EMPTY_TWIML);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
