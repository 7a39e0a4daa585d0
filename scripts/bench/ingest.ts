// Ingest bench: inbound SMS through the real Twilio Messaging receiver on PostgreSQL, all for one
// tenant (many customers, one webhook subscription to `conversation.created`), every request
// signed with the twilio library over the public URL:
//   (a) messages per second at -c BENCH_INGEST_CONNECTIONS, in two sections: `existing` (messages
//       to BENCH_INGEST_CUSTOMERS known customers) and `newCustomer` (every sender new: conversation,
//       event, delivery and message), each beside its physical limit: a bare node:http server
//       storing the same rows in one raw statement (ingest-physical-server.ts), in interleaved
//       rounds; per side msg/s, the server's and PostgreSQL's CPU ms per message (PostgreSQL: the
//       backends connected to the bench's database, from /proc) and zero lost (every 200 answer's
//       message is a row, counted in SQL); then round trips per message, counted by a proxy that
//       reads the PostgreSQL protocol (each Sync or simple Query the servers send is one
//       exchange), in a short pass of its own so the proxy's cost never touches the rates;
//   (b) the receiver's latency at a fixed 200 requests per second (p50 / p99), paced: one request
//       every 5 ms, each timed from when it was due (so a slow answer cannot hide the requests it
//       held up); beside it, for comparison with earlier runs, autocannon's `overallRate`, which
//       sends each second's 200 back to back at the start of the second (bursts at full speed);
//   (c) with BENCH_INGEST_PROFILE=1 (or =newCustomer), a CPU profile of the receiver's process under
//       the existing section's load (or the new customers').
// The receiver runs in the production build of the lean front (dist/server/main.mjs, what `npm start`
// serves; compiled by the bench, no Next build needed: the receivers are the lean front's own).
//   DATABASE_URL=postgresql://… npx tsx scripts/bench/ingest.ts      (or BENCH_PARTS=ingest npm run bench)
import { mkdtempSync, readdirSync } from "node:fs";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createServer, connect, type Server } from "node:net";
import pg from "pg";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks";
import { backendsCpu, backendsCpuDelta, freePort, processTreeCpuMs, spawnServer, type Running } from "./services";
import { summariseProfile } from "./profile-summary";
import { buildServer, SERVER_BUNDLE } from "../build-server.mjs";

const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as (opts: Record<string, unknown>) => Promise<any>;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const CONNECTIONS = Number(process.env.BENCH_INGEST_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? 3);
const SLICE_S = Number(process.env.BENCH_INGEST_SLICE ?? 4);
const FIXED_RATE = 200;
const FIXED_RATE_S = Number(process.env.BENCH_INGEST_FIXED_RATE_SECONDS ?? 10);
const CUSTOMERS = Number(process.env.BENCH_INGEST_CUSTOMERS ?? 2_000);
const TARGETS = { messagesPerSecond: 1_000, p99Ms: 25, overPhysical: 0.85, newCustomerOverPhysical: 0.7, newCustomerOverExisting: 0.5 };

const PUBLIC_BASE_URL = "https://hooks.bench.example";
const PATH = "/api/webhooks/twilio/messaging";
const ACCOUNT_SID = "AC" + "b".repeat(32);
const AUTH_TOKEN = "bench-ingest-auth-token-7c1d";
const BUSINESS_NUMBER = "+97145550123";
const SLUG = "bench-ingest";

const log = (msg: string) => console.error(`[bench:ingest] ${msg}`);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

type Ctx = { databaseUrl?: string };

/** A fresh bench tenant (the previous run's is deleted with its rows) with a Twilio SMS connection. */
async function benchTenant(databaseUrl: string): Promise<string> {
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const { applyMigrations } = await import("../../server/db/schema-engine");
  await applyMigrations(new PrismaPg({ connectionString: databaseUrl }));
  process.env.DATABASE_URL = databaseUrl;
  process.env.SKIP_MIGRATIONS = "1";
  const [{ getDb, closeDb }, { scopeToTenant }, { connectChannel }, { OPERATOR }] = await Promise.all([
    import("../../server/db/client"),
    import("../../server/db/tenant-scope"),
    import("../../server/channels/channel-connections"),
    import("../../server/audit/record-audit"),
  ]);
  const db = await getDb();
  await db.tenant.deleteMany({ where: { slug: SLUG } });
  const tenant = await db.tenant.create({ data: { name: "Ingest bench", slug: SLUG } });
  // One endpoint subscribed to new conversations: the new-customer section writes its delivery (no worker sends it).
  await db.webhookSubscription.create({
    data: {
      tenantId: tenant.id,
      targetUrl: "https://consumer.bench.example/hooks",
      secretEncrypted: "unused",
      secretPrefix: "whsec_bench",
      events: ["conversation.created"],
    },
  });
  await connectChannel(
    scopeToTenant(db, tenant.id),
    {
      provider: "twilio",
      channel: "sms",
      address: BUSINESS_NUMBER,
      credentials: { account_sid: ACCOUNT_SID, auth_token: AUTH_TOKEN },
    },
    OPERATOR,
  );
  // The `existing` section's customers, each with its conversation and `conversation.created`, as ingest leaves them.
  await db.$executeRawUnsafe(
    `WITH c AS (
       INSERT INTO conversations (id, tenant_id, channel, customer_identifier, attributes, updated_at)
       SELECT gen_random_uuid(), $1::uuid, 'sms', '+97150' || substr((10000000 + n)::text, 2), '{}', now() FROM generate_series(0, $2::int - 1) n
       RETURNING id)
     INSERT INTO events (id, tenant_id, type, data, created_at)
     SELECT gen_random_uuid(), $1::uuid, 'conversation.created', jsonb_build_object('object', jsonb_build_object('id', c.id)), now() FROM c`,
    tenant.id,
    CUSTOMERS,
  );
  // Each of them has written once before (an existing conversation has messages), and the seeded
  // tables are analyzed, as a running deployment's are: without statistics, a session's generic plan
  // of the ingest statement may find the pair's conversation through a (tenant_id, …) index, a tie
  // with the pair's key, and keep it for the run (its provider message id lookup, which had the same
  // tie, is gone: docs/perf/2026-11-ingest.md).
  await db.$executeRawUnsafe(
    `WITH m AS (
       INSERT INTO messages (id, tenant_id, conversation_id, direction, author, body, status, provider, provider_message_id, created_at)
       SELECT gen_random_uuid(), c.tenant_id, c.id, 'inbound', 'customer', 'Hello', 'received', 'twilio', 'SMseed' || c.customer_identifier, now()
       FROM conversations c WHERE c.tenant_id = $1::uuid
       RETURNING conversation_id)
     UPDATE conversations c SET message_count = 1, last_message_at = now(), last_activity_at = now() FROM m WHERE c.id = m.conversation_id`,
    tenant.id,
  );
  await db.$executeRawUnsafe("ANALYZE conversations, events, messages");
  await closeDb();
  return tenant.id;
}

/**
 * Twilio's inbound form for message `n` of a run (a unique MessageSid: 2 letters and 32 hex), from
 * one of CUSTOMERS customers, signed as Twilio signs it.
 */
type Section = "existing" | "newCustomer";
/** New senders of the whole bench run: each number is used once. */
let newSender = 0;
const senderOf = (section: Section, n: number) =>
  section === "existing" ? `+97150${String(10_000_000 + (n % CUSTOMERS)).slice(1)}` : `+97155${String(10_000_000 + (newSender++ % 10_000_000)).slice(1)}`;

function signedInbound(run: number, n: number, section: Section = "existing"): { body: string; headers: Record<string, string>; sid: string } {
  const sid = `SM${run.toString(16).padStart(8, "0")}${n.toString(16).padStart(24, "0")}`;
  const params = {
    MessageSid: sid,
    AccountSid: ACCOUNT_SID,
    From: senderOf(section, n),
    To: BUSINESS_NUMBER,
    Body: "Hello, is the two-bedroom in Marina still available for a viewing this week?",
    NumMedia: "0",
    SmsStatus: "received",
  };
  return {
    sid,
    body: new URLSearchParams(params).toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC_BASE_URL}${PATH}`, params),
    },
  };
}

let runCounter = Date.now() % 0xffffff;

/** One autocannon run of signed inbound messages; which MessageSids were answered 200. */
async function load(server: Running, opts: { seconds: number; connections: number; overallRate?: number; section?: Section; url?: string }) {
  const section = opts.section ?? "existing";
  // The baseline stores a new customer's message on its own path; the receiver has one path.
  const target = server.name === "ingest physical limit" && section === "newCustomer" ? "/new" : PATH;
  const run = ++runCounter;
  const answered: string[] = [];
  let refusal: string | null = null;
  let n = 0;
  const result = await autocannon({
    url: (opts.url ?? server.url) + target,
    connections: opts.connections,
    duration: opts.seconds,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
    requests: [
      {
        method: "POST",
        setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => {
          const message = signedInbound(run, n++, section);
          context.sid = message.sid;
          return { ...req, method: "POST", path: target, body: message.body, headers: message.headers };
        },
        onResponse: (status: number, body: string, context: Record<string, unknown>) => {
          if (status === 200) answered.push(context.sid as string);
          else if (!refusal) refusal = `${status} ${body.slice(0, 300)}`;
        },
      },
    ],
  });
  if (refusal) log(`${server.name}: first refusal: ${refusal}\n${server.output().slice(-3000)}`);
  return { result, answered, sent: n };
}

/** How many of these MessageSids are stored for the tenant (each at most once, by the unique key). */
async function storedCount(pool: pg.Pool, tenantId: string, sids: string[]): Promise<number> {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n FROM messages WHERE tenant_id = $1 AND provider = 'twilio' AND provider_message_id = ANY($2::text[])`,
    [tenantId, sids],
  );
  return rows[0].n;
}

type Side = { answered200: number; seconds: number; non2xx: number; errors: number; lost: number; cpuMs: number; pgCpuMs: number | null; p99: number[] };

async function throughput(servers: Record<"receiver" | "physical", Running>, pool: pg.Pool, tenantId: string, section: Section) {
  for (const server of Object.values(servers)) await load(server, { seconds: 2, connections: CONNECTIONS, section }); // warm-up
  const sides: Record<string, Side> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, server] of Object.entries(servers)) {
      const side = (sides[name] ??= { answered200: 0, seconds: 0, non2xx: 0, errors: 0, lost: 0, cpuMs: 0, pgCpuMs: 0, p99: [] });
      const cpu0 = processTreeCpuMs(server.proc.pid!);
      const pg0 = await backendsCpu(pool);
      const { result, answered } = await load(server, { seconds: SLICE_S, connections: CONNECTIONS, section });
      side.cpuMs += processTreeCpuMs(server.proc.pid!) - cpu0;
      const pgMs = backendsCpuDelta(pg0, await backendsCpu(pool));
      side.pgCpuMs = side.pgCpuMs === null || pgMs === null ? null : side.pgCpuMs + pgMs;
      side.answered200 += answered.length;
      side.seconds += result.duration;
      side.non2xx += result.non2xx;
      side.errors += result.errors + result.timeouts;
      side.p99.push(result.latency.p99);
      side.lost += answered.length - (await storedCount(pool, tenantId, answered));
    }
  }
  const summary = (s: Side) => ({
    messagesPerSecond: Math.round(s.answered200 / s.seconds),
    answered200: s.answered200,
    non2xx: s.non2xx,
    errors: s.errors,
    lost: s.lost,
    p99Ms: median(s.p99),
    serverCpuMsPerMessage: round(s.cpuMs / Math.max(s.answered200, 1), 3),
    postgresCpuMsPerMessage: s.pgCpuMs === null ? null : round(s.pgCpuMs / Math.max(s.answered200, 1), 3),
  });
  const receiver = summary(sides.receiver);
  const physical = summary(sides.physical);
  return { receiver, physical, overPhysical: round(receiver.messagesPerSecond / physical.messagesPerSecond) };
}

/**
 * A TCP proxy in front of PostgreSQL that counts the exchanges its clients start: each Sync (the
 * end of an extended-protocol query, pipelined or not) and each simple Query. Startup and SSL
 * requests (untyped) are passed through uncounted.
 */
async function countingProxy(databaseUrl: string): Promise<{ url: string; exchanges: () => number; parses: () => number; close: () => void }> {
  const upstream = new URL(databaseUrl);
  let exchanges = 0;
  let parses = 0;
  const server: Server = createServer((client) => {
    const db = connect(Number(upstream.port || 5432), upstream.hostname);
    let buffer: Buffer = Buffer.alloc(0);
    let started = false;
    client.on("data", (chunk: Buffer) => {
      db.write(chunk);
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        if (!started) {
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          if (code === 196608) started = true; // protocol 3.0: typed messages follow
          buffer = buffer.subarray(length);
          continue;
        }
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) break;
        const type = buffer[0];
        if (type === 0x53 /* S */ || type === 0x51 /* Q */) exchanges++;
        if (type === 0x50 /* P */) parses++;
        buffer = buffer.subarray(1 + length);
      }
    });
    db.on("data", (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      db.destroy();
    };
    client.on("error", end).on("close", end);
    db.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  url.searchParams.set("sslmode", "disable");
  return { url: url.toString(), exchanges: () => exchanges, parses: () => parses, close: () => server.close() };
}

/** Exchanges with PostgreSQL per answered message, per section and side, each server started anew on the counting proxy. */
async function roundTrips(databaseUrl: string, tenantId: string) {
  const proxy = await countingProxy(databaseUrl);
  const servers = {
    receiver: await startReceiver(proxy.url),
    physical: await startPhysical(proxy.url, tenantId),
  };
  try {
    const out: Record<Section, Record<"receiver" | "physical", number>> = {
      existing: { receiver: NaN, physical: NaN },
      newCustomer: { receiver: NaN, physical: NaN },
    };
    for (const section of ["existing", "newCustomer"] as const) {
      for (const [name, server] of Object.entries(servers) as ["receiver" | "physical", Running][]) {
        await load(server, { seconds: 1, connections: 8, section }); // connections opened, statements prepared
        const before = proxy.exchanges();
        const parsed = proxy.parses();
        const { sent } = await load(server, { seconds: 2, connections: 8, section });
        await new Promise((r) => setTimeout(r, 500)); // requests still in flight when the load stopped
        // Per request sent: one still in flight when the load stopped was stored all the same.
        out[section][name] = round((proxy.exchanges() - before) / Math.max(sent, 1), 2);
        if (process.env.BENCH_INGEST_DEBUG === "1")
          log(`${section} ${name}: ${sent} sent, ${proxy.exchanges() - before} exchanges, ${proxy.parses() - parsed} parses`);
      }
    }
    return out;
  } finally {
    await Promise.all([servers.receiver.stop(), servers.physical.stop()]);
    proxy.close();
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/** One signed inbound message sent over `agent`; resolves with its status when the answer has ended. */
function sendInbound(server: Running, agent: Agent, message: ReturnType<typeof signedInbound>): Promise<number> {
  const url = new URL(server.url);
  return new Promise((resolve) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: PATH,
        method: "POST",
        headers: { ...message.headers, "content-length": String(Buffer.byteLength(message.body)) },
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
        res.once("error", () => resolve(0));
      },
    );
    req.once("error", () => resolve(0));
    req.end(message.body);
  });
}

/**
 * What a provider's steady traffic sees: `rate` requests a second, evenly spaced (open loop: a
 * request is sent when due whether or not earlier ones were answered), each timed from when it was
 * due rather than from when it went out.
 */
async function pacedRate(server: Running, rate: number, seconds: number) {
  const run = ++runCounter;
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const latencies: number[] = [];
  const answered: string[] = [];
  const sends: Promise<void>[] = [];
  const total = rate * seconds;
  const start = performance.now() + 50;
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const message = signedInbound(run, n);
    sends.push(
      sendInbound(server, agent, message).then((status) => {
        latencies.push(performance.now() - due);
        if (status === 200) answered.push(message.sid);
      }),
    );
  }
  await Promise.all(sends);
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    rate,
    seconds,
    sent: total,
    answered200: answered.length,
    p50Ms: round(percentile(sorted, 50), 1),
    p99Ms: round(percentile(sorted, 99), 1),
    maxMs: round(sorted.at(-1) ?? NaN, 1),
    answered,
  };
}

/** Autocannon's `overallRate`: each connection sends its share of a second back to back at the second's start. */
async function burstsAtRate(server: Running) {
  const { result, answered, sent } = await load(server, { seconds: FIXED_RATE_S, connections: 20, overallRate: FIXED_RATE });
  return {
    rate: FIXED_RATE,
    seconds: FIXED_RATE_S,
    sent,
    answered200: answered.length,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
  };
}

const serverEnv = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  SKIP_MIGRATIONS: "1",
  DEMO_SEED: "0",
  LOG_LEVEL: "warn",
  NODE_ENV: "production",
  PUBLIC_BASE_URL,
  RATE_LIMIT_DISABLED: "1",
  REDIS_URL: undefined,
  UPSTASH_REDIS_REST_URL: undefined,
  // Only the receiver is measured: no webhook worker, recovery sweep or SLA check beside it.
  WEBHOOK_ENGINE: "off",
  SEND_RECOVERY_INTERVAL_MS: "0",
  SLA_CHECK_INTERVAL_MS: "0",
});

/** The production server, compiled once per bench run (esbuild, a second or two). */
let compiledOnce: Promise<void> | undefined;

async function startReceiver(databaseUrl: string, nodeArgs: string[] = []) {
  compiledOnce ??= buildServer();
  await compiledOnce;
  return spawnServer("ingest receiver", [...nodeArgs, SERVER_BUNDLE], {
    port: await freePort(),
    cwd: root,
    readyPath: "/api/v1",
    env: serverEnv(databaseUrl),
  });
}

async function startPhysical(databaseUrl: string, tenantId: string) {
  return spawnServer("ingest physical limit", ["--import", "tsx", path.join(root, "scripts/bench/ingest-physical-server.ts")], {
    port: await freePort(),
    cwd: root,
    env: { DATABASE_URL: databaseUrl, BENCH_TENANT_ID: tenantId },
  });
}

/** A CPU profile of the receiver's process over 5 s of load (after 2 s of warm-up). */
async function profileReceiver(databaseUrl: string, section: Section) {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-ingest-prof-"));
  const server = await startReceiver(databaseUrl, ["--cpu-prof", "--cpu-prof-dir", dir]);
  try {
    await load(server, { seconds: 2, connections: CONNECTIONS, section });
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    const { answered } = await load(server, { seconds: 5, connections: CONNECTIONS, section });
    const toUs = Number(process.hrtime.bigint() / 1000n);
    await server.stop();
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) return null;
    const profile = summariseProfile(path.join(dir, file), 15, { fromUs, toUs });
    return { messages: answered.length, cpuMsPerMessage: round(profile.busyMs / Math.max(answered.length, 1), 3), ...profile, file: path.join(dir, file) };
  } finally {
    await server.stop();
  }
}

export async function benchIngest(ctx: Ctx = {}) {
  const databaseUrl = ctx.databaseUrl ?? process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("the ingest bench needs DATABASE_URL (PostgreSQL)");
  const loadBefore = loadavg().map((x) => round(x));
  const tenantId = await benchTenant(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const receiver = await startReceiver(databaseUrl);
  const physical = await startPhysical(databaseUrl, tenantId);
  if (process.env.BENCH_INGEST_ROUND_TRIPS_ONLY === "1") {
    await Promise.all([receiver.stop(), physical.stop()]);
    await pool.end();
    return { roundTripsPerMessage: await roundTrips(databaseUrl, tenantId) };
  }
  try {
    log(`throughput: ${ROUNDS} interleaved rounds of ${SLICE_S} s, receiver vs physical limit, -c ${CONNECTIONS}, ${CUSTOMERS} customers of one tenant`);
    const existing = await throughput({ receiver, physical }, pool, tenantId, "existing");
    log("throughput, every sender a new customer");
    const newCustomer = await throughput({ receiver, physical }, pool, tenantId, "newCustomer");
    log(`latency at a fixed ${FIXED_RATE} req/s for ${FIXED_RATE_S} s, paced, then in autocannon's bursts`);
    const { answered: pacedAnswered, ...steady } = await pacedRate(receiver, FIXED_RATE, FIXED_RATE_S);
    const pacedLost = pacedAnswered.length - (await storedCount(pool, tenantId, pacedAnswered));
    const bursts = await burstsAtRate(receiver);
    await Promise.all([receiver.stop(), physical.stop()]);
    log("round trips per message (through a counting proxy)");
    const trips = await roundTrips(databaseUrl, tenantId);
    const counts = await pool.query<{ conversations: number; created: number; messages: number }>(
      `SELECT (SELECT count(*)::int FROM conversations WHERE tenant_id = $1) AS conversations,
        (SELECT count(*)::int FROM events WHERE tenant_id = $1 AND type = 'conversation.created') AS created,
        (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages`,
      [tenantId],
    );
    const profiled = process.env.BENCH_INGEST_PROFILE === "newCustomer" ? "newCustomer" : process.env.BENCH_INGEST_PROFILE === "1" ? "existing" : null;
    const profile = profiled ? (log(`CPU profile of the receiver (${profiled})`), await profileReceiver(databaseUrl, profiled)) : undefined;
    const sections = {
      existing: { ...existing, roundTripsPerMessage: trips.existing },
      newCustomer: {
        ...newCustomer,
        roundTripsPerMessage: trips.newCustomer,
        overExisting: round(newCustomer.receiver.messagesPerSecond / existing.receiver.messagesPerSecond),
      },
    };
    const lost = existing.receiver.lost + existing.physical.lost + newCustomer.receiver.lost + newCustomer.physical.lost + pacedLost;
    return {
      tenant: `one tenant, ${CUSTOMERS} customers (existing), new senders (newCustomer)`,
      connections: CONNECTIONS,
      ...sections,
      // Only the receiver writes events; every conversation the receiver created has exactly one (the baseline's too).
      stored: counts.rows[0],
      fixedRate: { ...steady, lost: pacedLost },
      fixedRateInBursts: bursts,
      targets: TARGETS,
      withinTargets: {
        messagesPerSecond: existing.receiver.messagesPerSecond >= TARGETS.messagesPerSecond,
        zeroLost: lost === 0,
        oneCreatedEventPerConversation: counts.rows[0].created === counts.rows[0].conversations,
        p99: steady.p99Ms <= TARGETS.p99Ms,
        existingOverPhysical: existing.overPhysical >= TARGETS.overPhysical,
        newCustomerOverPhysical: newCustomer.overPhysical >= TARGETS.newCustomerOverPhysical,
        newCustomerOverExisting: sections.newCustomer.overExisting >= TARGETS.newCustomerOverExisting,
      },
      loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x)) },
      ...(profile !== undefined ? { profile } : {}),
    };
  } finally {
    await Promise.all([receiver.stop(), physical.stop()]);
    // The bench tenant goes with its rows: its endpoint is fictitious, and the ~100,000 deliveries
    // its new customers queued for it would otherwise stay due for whatever part runs next (the
    // metrics part's scrapes count them, the webhooks part's bare loop scans them).
    await pool.query("DELETE FROM tenants WHERE id = $1", [tenantId]).catch((err) => log(`could not delete the bench tenant: ${err}`));
    await pool.end();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await benchIngest();
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
