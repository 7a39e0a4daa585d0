// Bench baseline (1), the physical limit here: plain node:http answering the offerings page with
// one raw `pg` query (a named prepared statement), no auth, no limiter, no validation.
// Env: DATABASE_URL, PORT, BENCH_TENANT_ID.
import { createServer } from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const tenantId = process.env.BENCH_TENANT_ID!;
const PAGE_SQL = `SELECT id, external_id, reference_number, title, title_ar, description, description_ar, attributes,
  price::text AS price, price_currency, address, photos, status, to_char(available_from, 'YYYY-MM-DD') AS available_from,
  created_at, updated_at
  FROM offerings WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT $2`;

// numeric::text keeps the column's scale ("1500.500000…"); the API answers plain notation.
const plainDecimal = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);

createServer(async (req, res) => {
  try {
    const limit = Math.min(Number(new URL(req.url ?? "/", "http://x").searchParams.get("limit") ?? 20), 100);
    const { rows } = await pool.query({ name: "offerings_page", text: PAGE_SQL, values: [tenantId, limit + 1] });
    const hasMore = rows.length > limit;
    const page = hasMore ? rows.slice(0, limit) : rows;
    const body = JSON.stringify({
      data: page.map((r) => ({ ...r, price: plainDecimal(r.price), created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() })),
      next_cursor: hasMore ? page[page.length - 1].id : null,
      has_more: hasMore,
    });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
}).listen(Number(process.env.PORT), "127.0.0.1");
