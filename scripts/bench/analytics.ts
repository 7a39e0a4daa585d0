// Analytics rollup benchmark: one tenant with 100,000 conversations and 1,000,000 messages (plus
// leads and appointments), all inside the last 90 days (the worst case for a 90-day rollup), then
// GET /api/v1/analytics/weekly-rollup?days=90 through the REST contract in-process (auth, rate limit,
// validation and the SQL), timed over RUNS sequential requests. Target: under 200 ms on PostgreSQL.
//   DATABASE_URL=postgresql://… npx tsx scripts/bench/analytics.ts
// Seeding is SQL (INSERT … SELECT generate_series); a seeded bench tenant is reused by later runs.
import { fileURLToPath } from "node:url";
import { openDatabase, closeDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { issueApiKey } from "../../server/auth/api-keys";
import { OPERATOR } from "../../server/audit/record-audit";
import { handleRestRequest } from "../../server/http/rest-bridge";

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 100_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const LEADS = Math.round(CONVERSATIONS / 5);
const APPOINTMENTS = Math.round(CONVERSATIONS / 10);
const RUNS = Number(process.env.BENCH_ANALYTICS_RUNS ?? 20);
const WARMUP = 3;
const SLUG = `bench-analytics-${CONVERSATIONS}-${MESSAGES}`;

export type AnalyticsBenchResult = {
  conversations: number;
  messages: number;
  leads: number;
  appointments: number;
  seeded_ms: number | null;
  runs: number;
  median_ms: number;
  p99_ms: number;
  min_ms: number;
  max_ms: number;
  target_ms: number;
  within_target: boolean;
};

const log = (msg: string) => console.error(`[bench:analytics] ${msg}`);
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const round = (x: number) => Math.round(x * 100) / 100;

/** Seeds the bench tenant unless a complete one exists; returns its id and the seeding time. */
async function ensureSeededTenant(): Promise<{ tenantId: string; seededMs: number | null }> {
  const db = (await openDatabase()).prisma;
  const existing = await db.tenant.findUnique({ where: { slug: SLUG }, select: { id: true, metadata: true } });
  if (existing?.metadata === "seeded") return { tenantId: existing.id, seededMs: null };
  if (existing) await db.tenant.delete({ where: { id: existing.id } }); // a half-seeded leftover
  const tenant = await db.tenant.create({ data: { name: "Analytics bench", slug: SLUG } });
  const t = tenant.id;
  const started = performance.now();
  // Rows spread uniformly over the last 90 days; ids derived from (tenant, n) so messages, leads
  // and appointments can reference conversation n without a lookup.
  const convId = (n: string) => `md5('${t}:c:' || ${n})::uuid`;
  const within90Days = `now() - random() * interval '89 days 23 hours'`;
  log(`seeding ${CONVERSATIONS} conversations, ${MESSAGES} messages, ${LEADS} leads, ${APPOINTMENTS} appointments`);
  await db.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`
        INSERT INTO conversations (id, tenant_id, channel, customer_identifier, status, closed_at, created_at, updated_at, last_activity_at, message_count)
        SELECT ${convId("i")}, '${t}'::uuid,
          (ARRAY['voice','sms','whatsapp','webchat','email'])[1 + i % 5], 'bench-' || i,
          CASE WHEN i % 10 = 0 THEN 'closed' ELSE 'open' END,
          CASE WHEN i % 10 = 0 THEN c + interval '2 hours' END, c, c, c, 10
        FROM (SELECT i, ${within90Days} AS c FROM generate_series(1, ${CONVERSATIONS}) AS i) s`);
      await tx.$executeRawUnsafe(`
        INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, created_at)
        SELECT gen_random_uuid(), '${t}'::uuid, ${convId(`(1 + i % ${CONVERSATIONS})`)},
          CASE WHEN i % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
          CASE WHEN i % 2 = 0 THEN 'customer' ELSE 'assistant' END,
          'message ' || i, CASE WHEN i % 2 = 0 THEN 'received' ELSE 'sent' END, ${within90Days}
        FROM generate_series(1, ${MESSAGES}) AS i`);
      await tx.$executeRawUnsafe(`
        INSERT INTO leads (id, tenant_id, conversation_id, status, qualified_at, handoff_requested_at, created_at, updated_at)
        SELECT gen_random_uuid(), '${t}'::uuid, ${convId("i")},
          (ARRAY['new','qualified','booked','converted','lost'])[1 + i % 5],
          CASE WHEN i % 5 <> 0 THEN c + interval '1 hour' END,
          CASE WHEN i % 7 = 0 THEN c + interval '3 hours' END, c, c + interval '1 day'
        FROM (SELECT i, ${within90Days} AS c FROM generate_series(1, ${LEADS}) AS i) s`);
      await tx.$executeRawUnsafe(`
        INSERT INTO appointments (id, tenant_id, customer_name, customer_phone, scheduled_start, scheduled_end, status, conversation_id, created_at, updated_at)
        SELECT gen_random_uuid(), '${t}'::uuid, 'Customer ' || i, '+971501234567', c + interval '3 days', c + interval '3 days 1 hour',
          (ARRAY['confirmed','cancelled','completed'])[1 + i % 3], ${convId("i")}, c, c + interval '2 days'
        FROM (SELECT i, ${within90Days} AS c FROM generate_series(1, ${APPOINTMENTS}) AS i) s`);
      await tx.tenant.update({ where: { id: t }, data: { metadata: "seeded" } });
    },
    { timeout: 30 * 60_000, maxWait: 60_000 },
  );
  // What autovacuum does on a live database: statistics for the planner, and the visibility map
  // that lets the per-day counts read the (tenant_id, created_at, direction) index alone.
  for (const table of ["conversations", "messages", "leads", "appointments"]) await db.$executeRawUnsafe(`VACUUM ANALYZE ${table}`);
  const seededMs = performance.now() - started;
  log(`seeded in ${Math.round(seededMs)} ms`);
  return { tenantId: t, seededMs };
}

async function timedRollup(key: string): Promise<number> {
  const started = performance.now();
  const res = await handleRestRequest(new Request("http://127.0.0.1/api/v1/analytics/weekly-rollup?days=90", { headers: { authorization: `Bearer ${key}` } }));
  const body = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`rollup answered ${res.status}: ${body.slice(0, 200)}`);
  return ms;
}

export async function benchAnalytics(): Promise<AnalyticsBenchResult> {
  if (!process.env.DATABASE_URL) throw new Error("benchAnalytics needs DATABASE_URL (a PostgreSQL server)");
  process.env.LOG_LEVEL ??= "warn";
  const { tenantId, seededMs } = await ensureSeededTenant();
  const db = scopeToTenant((await openDatabase()).prisma, tenantId);
  const { plaintext: key } = await issueApiKey(db, { name: "analytics bench", scopes: ["read"] }, OPERATOR);

  for (let i = 0; i < WARMUP; i++) await timedRollup(key);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await timedRollup(key));
  const median = quantile(times, 0.5);
  return {
    conversations: CONVERSATIONS,
    messages: MESSAGES,
    leads: LEADS,
    appointments: APPOINTMENTS,
    seeded_ms: seededMs === null ? null : Math.round(seededMs),
    runs: RUNS,
    median_ms: round(median),
    p99_ms: round(quantile(times, 0.99)),
    min_ms: round(Math.min(...times)),
    max_ms: round(Math.max(...times)),
    target_ms: 200,
    within_target: quantile(times, 0.99) < 200,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const result = await benchAnalytics();
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await closeDatabase();
  }
}
