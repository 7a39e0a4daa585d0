// Every environment variable the server reads, declared once: its type, default and effect. The
// README's settings table is generated from this list (`npm run settings:docs`; a test keeps the two equal).
//
// Reading: `setting("NAME")` parses the variable once per process and caches it (a read is a map
// lookup); tests and scripts that change process.env while running reset the cache (`resetSettings`,
// `resetSettingsOnEnvChange`).
// Startup: `checkSettings()` parses them all and throws one error naming every bad one, so a
// misconfigured process stops before it serves anything. Nearly a leaf: of ours it imports only the IP
// range parser (a leaf) and the server-only mark.
import "#server-only";
import { z } from "zod";
import { parseIpRange } from "./ip-address";

type Env = Record<string, string | undefined>;

/** One declared setting. `shown` is the README's default when it is not simply the parsed default. */
type Declared<S extends z.ZodType> = { schema: S; doc: string; group: string; shown?: string; secret?: boolean };

// ---- value types (each message completes "NAME ...") ----
const positiveInt = () =>
  z
    .string()
    .regex(/^[1-9][0-9]*$/, "must be a positive integer")
    .transform(Number);
const nonNegativeInt = () =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, "must be a non-negative integer")
    .transform(Number);
const TRUE = ["1", "true", "yes", "on"];
const FALSE = ["0", "false", "no", "off"];
const flag = () =>
  z
    .string()
    .transform((v) => v.toLowerCase())
    .refine((v) => TRUE.includes(v) || FALSE.includes(v), "must be 1/true/yes/on or 0/false/no/off")
    .transform((v) => TRUE.includes(v))
    .default(false);
const text = () => z.string();
const oneOf = <const V extends readonly [string, ...string[]]>(values: V) => z.enum(values, { error: `must be one of ${values.join(", ")}` });
const httpUrl = () =>
  z.string().refine((v) => {
    try {
      return ["http:", "https:"].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, "must be an http(s) URL");
const portNumber = () =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,4}$/, "must be a port number")
    .transform(Number)
    .refine((p) => p <= 65535, "must be a port number");
const commaListOf = (v: string) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const commaList = () => z.string().transform(commaListOf);
const cidrList = () => text().refine((v) => commaListOf(v).every((entry) => parseIpRange(entry) !== null), "must list IP addresses or CIDR ranges");

const declare = <S extends z.ZodType>(group: string, schema: S, doc: string, extra: { shown?: string; secret?: boolean } = {}): Declared<S> => ({
  group,
  schema,
  doc,
  ...extra,
});

const DB = "Database";
const RL = "Rate limits";
const HTTP = "HTTP front";
const AUTH = "Dashboard sign-in";
const HOOKS = "Webhooks";
const CONV = "Conversations and channels";
const OPS = "Operations";
const KEEP = "Retention and the tenant lifecycle";
/** A retention period in days: 0 keeps the rows forever. */
const retentionDays = (days: number) => nonNegativeInt().default(days);

export const SETTINGS = {
  // Database
  DATABASE_URL: declare(
    DB,
    text().optional(),
    "PostgreSQL (`@prisma/adapter-pg`) instead of the embedded PGlite; migrations are applied on start (or beforehand with `npm run migrate`)",
    { secret: true },
  ),
  DIRECT_DATABASE_URL: declare(
    DB,
    text().optional(),
    "a direct PostgreSQL connection (not through a connection pooler) for what needs a session of its own: migrations (their session advisory lock) and the webhook worker's LISTEN; set it when DATABASE_URL is a pooler such as PgBouncer in transaction mode (README, 'Behind a connection pooler')",
    { secret: true, shown: "`DATABASE_URL`" },
  ),
  DATABASE_POOLER: declare(
    DB,
    oneOf(["none", "transaction"] as const).optional(),
    "`transaction`: DATABASE_URL is a transaction-mode pooler, so no named prepared statements are used (each statement is parsed again per call); `none`: a direct connection or a session-mode pooler, statements are prepared once per connection",
    { shown: "`transaction` when `DIRECT_DATABASE_URL` is set, else `none`" },
  ),
  DATABASE_POOL_SIZE: declare(DB, positiveInt().default(10), "connections per process for Prisma (writes, transactions, most reads)"),
  DATABASE_STATEMENT_POOL_SIZE: declare(
    DB,
    positiveInt().default(4),
    "connections per process for the pipelined prepared statements that may wait on a lock (ingest); the key lookups and hot lists pipeline on one more connection of their own, so a process opens at most the sum of the two pools plus one, and one more where the embedded webhook worker runs, for its claim (behind a transaction pooler, where nothing pipelines, the key lookups get this many of their own instead of one)",
  ),
  DATABASE_CONNECT_TIMEOUT_MS: declare(DB, positiveInt().default(3000), "how long to wait for a database connection before answering 503"),
  DATABASE_QUERY_TIMEOUT_MS: declare(
    DB,
    positiveInt().default(10000),
    "PostgreSQL's `statement_timeout` for every connection of the server's pools: a statement running longer is cancelled by the server (its transaction rolls back) and answered 503 'busy'; a server that answers nothing at all (paused, cut off) is given up by the client 1 s after this, its connections discarded, and answered 503 'unavailable' (README, 'Timeouts')",
  ),
  DATABASE_LOCK_TIMEOUT_MS: declare(
    DB,
    positiveInt().default(5000),
    "PostgreSQL's `lock_timeout`: how long a statement waits for a row or table lock before it is cancelled (503 'busy', nothing written)",
  ),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: declare(
    DB,
    positiveInt().default(60000),
    "PostgreSQL's `idle_in_transaction_session_timeout`: a session that holds a transaction open without sending anything for this long is ended by the server, releasing its locks (above the longest transaction the server holds open on purpose, 30 s)",
  ),
  DATA_DIR: declare(DB, text().default(".data"), "where the embedded database (and the generated encryption key and auth secret) live"),
  EMBEDDED_DB_SHARED_BUFFERS: declare(
    DB,
    z
      .string()
      .regex(/^[1-9][0-9]*(kB|MB|GB)$/, "must be a size such as 16MB")
      .default("16MB"),
    "the embedded PGlite's shared buffers (its memory never shrinks once grown; PostgreSQL's default is 128MB)",
  ),
  EMBEDDED_DB_TEMPLATE: declare(
    DB,
    text().default("dist/embedded-template"),
    "a migrated, empty embedded database that `npm run build` makes: a new embedded database starts as its copy instead of being created and migrated; where there is none, it is created",
  ),
  SKIP_MIGRATIONS: declare(DB, flag(), "do not apply pending migrations when the database opens (they were applied beforehand)"),
  MIGRATE_DEBUG: declare(DB, flag(), "print the schema engine's log while migrating"),

  // Rate limits
  REDIS_URL: declare(RL, text().optional(), "rate limits in a Redis server over TCP (ioredis); unset: in this process's memory", { secret: true }),
  UPSTASH_REDIS_REST_URL: declare(RL, httpUrl().optional(), "rate limits in Upstash Redis over REST (needs `UPSTASH_REDIS_REST_TOKEN`)"),
  UPSTASH_REDIS_REST_TOKEN: declare(RL, text().optional(), "the Upstash REST token", { secret: true }),
  RATE_LIMIT_DISABLED: declare(RL, flag(), "no rate limiting at all (benchmarks)"),
  RATE_LIMIT_WINDOW_SECONDS: declare(RL, positiveInt().default(60), "length of every rate-limit window"),
  RATE_LIMIT_STORE_TIMEOUT_MS: declare(
    RL,
    positiveInt().default(1000),
    "how long a Redis/Upstash call may take before the store counts as down and each process limits in memory",
  ),
  RATE_LIMIT_KEY_PREFIX: declare(
    RL,
    z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1 to 64 letters, digits, '_', '.' or '-'")
      .default("rl"),
    "namespace of every counter in Redis/Upstash (`<prefix>:<layer>:<id>:<window>`): deployments that share one Redis keep apart with their own",
  ),
  RATE_LIMIT_PER_KEY: declare(RL, positiveInt().default(200), "requests per API key per window"),
  RATE_LIMIT_PER_TENANT: declare(RL, positiveInt().default(5000), "requests per tenant per window"),
  RATE_LIMIT_PER_USER: declare(RL, positiveInt().default(200), "dashboard requests per user per window"),
  RATE_LIMIT_PER_TOOL: declare(RL, positiveInt().default(50), "calls per agent tool per window"),
  RATE_LIMIT_PER_IP: declare(
    RL,
    positiveInt().default(500),
    "requests per client IP per window on the provider receivers and the invitation page's public procedures",
  ),
  RATE_LIMIT_FAILED_AUTH_PER_IP: declare(RL, positiveInt().default(500), "failed authentications (401) per client IP per window on `/api/v1`, then 429"),

  // HTTP front
  HOST: declare(HTTP, text().default("127.0.0.1"), "the lean front's listen address"),
  PORT: declare(HTTP, portNumber().default(3000), "the lean front's listen port"),
  HTTP_HEADERS_TIMEOUT_MS: declare(HTTP, positiveInt().default(10_000), "time allowed for a request's headers, then 408 and close"),
  HTTP_REQUEST_TIMEOUT_MS: declare(
    HTTP,
    positiveInt().default(30_000),
    "time allowed for a whole request with its body, then 408 and close (at least the headers timeout)",
  ),
  SHUTDOWN_TIMEOUT_MS: declare(
    HTTP,
    positiveInt().default(25_000),
    "on SIGTERM/SIGINT, time for requests and webhook attempts in flight before leases are released and the process exits",
  ),
  SHUTDOWN_DELAY_MS: declare(
    HTTP,
    nonNegativeInt().default(0),
    "on SIGTERM/SIGINT, how long the process keeps serving (new connections too; the lean front and `next start` alike) while `/readyz` answers 503, before it drains: give it the load balancer's probe interval times its failure threshold (docs/operations.md)",
  ),
  TRUSTED_PROXIES: declare(
    HTTP,
    cidrList().optional(),
    "proxy IPs/CIDRs (comma list) whose `X-Forwarded-For` is believed; otherwise the client is the socket's address",
  ),
  AUTH_TRUSTED_PROXIES: declare(HTTP, cidrList().optional(), "older name of `TRUSTED_PROXIES`, read when that is unset"),
  PUBLIC_BASE_URL: declare(
    HTTP,
    httpUrl().optional(),
    "the scheme and host (and any path prefix) providers and Inngest call (Twilio signs the public URL; Inngest is registered at `<PUBLIC_BASE_URL>/api/inngest`); set it behind a proxy, and wherever Inngest is configured (docs/inngest.md)",
  ),

  // Dashboard sign-in
  BETTER_AUTH_SECRET: declare(AUTH, text().optional(), "signs dashboard sessions", { shown: "generated once into `DATA_DIR/auth-secret`", secret: true }),
  BETTER_AUTH_URL: declare(AUTH, httpUrl().optional(), "the dashboard's public URL (trusted origin of cookie-authenticated calls)"),
  AUTH_TRUSTED_ORIGINS: declare(
    AUTH,
    commaList().optional(),
    "further trusted browser origins (comma list); with neither this nor `BETTER_AUTH_URL` the request's own host is trusted",
  ),
  AUTH_SIGNIN_RATE_WINDOW_SECONDS: declare(AUTH, positiveInt().default(60), "window of the sign-in attempt limit"),
  AUTH_SIGNIN_RATE_MAX: declare(AUTH, positiveInt().default(10), "sign-in attempts per client address per window"),
  ENCRYPTION_KEY: declare(
    AUTH,
    text().optional(),
    "32-byte key (hex or base64) encrypting webhook secrets and CRM credentials at rest, and stored `Idempotency-Key` answers that carry a webhook secret",
    {
      shown: "generated once into `DATA_DIR/encryption.key`",
      secret: true,
    },
  ),
  INVITATION_MAIL_WEBHOOK_URL: declare(
    AUTH,
    httpUrl().optional(),
    "where each invitation email is POSTed as JSON `{ to, subject, text }`; unset: no email, the dashboard shows the link to copy",
  ),
  INVITATION_MAIL_WEBHOOK_TOKEN: declare(AUTH, text().optional(), "bearer token sent with each invitation email POST", { secret: true }),

  // Webhooks
  WEBHOOK_ENGINE: declare(
    HOOKS,
    oneOf(["auto", "off"]).default("auto"),
    "`off`: this process delivers no webhooks; `auto`: Inngest when its variables are set, else the embedded worker",
  ),
  WEBHOOK_WORKER_CONCURRENCY: declare(HOOKS, positiveInt().default(32), "attempts the embedded worker runs at once"),
  WEBHOOK_POLL_INTERVAL_MS: declare(
    HOOKS,
    positiveInt().default(1000),
    "how often the embedded worker looks for due deliveries (it is also woken by LISTEN/NOTIFY)",
  ),
  WEBHOOK_LEASE_MS: declare(HOOKS, positiveInt().optional(), "how long a claimed delivery is held before another worker may take it", {
    shown: "attempt timeout + 20000",
  }),
  WEBHOOK_ATTEMPT_TIMEOUT_MS: declare(HOOKS, positiveInt().default(10_000), "how long one delivery attempt may take"),
  WEBHOOK_RETRY_DELAYS_MS: declare(
    HOOKS,
    z
      .string()
      .transform((v) => v.split(",").map((s) => Number(s.trim())))
      .refine(
        (d) => d.length === 6 && d.every((n) => Number.isInteger(n) && n >= 0) && d[0] === 0,
        "must be 6 comma-separated non-negative integers starting with 0",
      )
      .optional(),
    "the retry ladder's delays before each attempt",
    { shown: "`0,60000,300000,1800000,7200000,43200000`" },
  ),
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: declare(
    HOOKS,
    positiveInt().default(8),
    "attempts in flight at once to one subscription, across every worker process (a slow or hanging endpoint holds no more)",
  ),
  WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: declare(
    HOOKS,
    positiveInt().default(24),
    "attempts in flight at once for one tenant's subscriptions together (below the worker's concurrency, so other tenants always find room)",
  ),
  WEBHOOK_BREAKER_FAILURES: declare(
    HOOKS,
    positiveInt().default(5),
    "consecutive failed attempts that open a subscription's circuit breaker (then only spaced probes are sent)",
  ),
  WEBHOOK_BREAKER_PROBE_INTERVAL_MS: declare(HOOKS, positiveInt().default(30_000), "while a breaker is open: the time from a failure to the next probe"),
  WEBHOOK_AUTO_DISABLE_AFTER_SECONDS: declare(
    HOOKS,
    positiveInt().default(432_000),
    "a subscription failing this long without a single success is disabled (audited, shown on its page); 5 days by default",
  ),
  WEBHOOK_SECRET_OVERLAP_SECONDS: declare(HOOKS, nonNegativeInt().default(86_400), "how long a rolled webhook secret keeps signing beside the new one"),
  WEBHOOK_ALLOW_LOOPBACK: declare(HOOKS, flag(), "allow webhook and CRM targets on loopback addresses (local testing only)"),
  INNGEST_EVENT_KEY: declare(
    HOOKS,
    text().optional(),
    "with any `INNGEST_*` set, the retry ladder runs as an Inngest function instead of the embedded worker",
    { secret: true },
  ),
  INNGEST_SIGNING_KEY: declare(
    HOOKS,
    text().optional(),
    "Inngest's signing key (see `INNGEST_EVENT_KEY`); without it (and without `INNGEST_DEV`) `/api/inngest` answers 404 'not configured'",
    { secret: true },
  ),
  INNGEST_BASE_URL: declare(HOOKS, httpUrl().optional(), "a self-hosted Inngest server (see `INNGEST_EVENT_KEY`)"),
  INNGEST_DEV: declare(
    HOOKS,
    text().optional(),
    "Inngest's dev server (`1` or its URL; see `INNGEST_EVENT_KEY`); without `PUBLIC_BASE_URL` the dev server is told `http://HOST:PORT/api/inngest`",
  ),
  INNGEST_SERVE_ORIGIN: declare(
    HOOKS,
    httpUrl().optional(),
    "the origin Inngest is told to call the app at (Inngest's own variable; default: `PUBLIC_BASE_URL`'s), never a request's Host",
  ),
  INNGEST_SERVE_PATH: declare(
    HOOKS,
    z
      .string()
      .regex(/^\/[^?#\s]*$/, "must be a path beginning with /")
      .optional(),
    "the path Inngest is told to call (Inngest's own variable, for a proxy that maps it to `/api/inngest`; default: `PUBLIC_BASE_URL`'s path + `/api/inngest`)",
  ),

  // Conversations and channels
  CHANNEL_DRIVER: declare(
    CONV,
    oneOf(["record", "http"]).default("record"),
    "how `POST /conversations/{id}/send` leaves the platform: `record` (nothing leaves) or `http`",
  ),
  CHANNEL_HTTP_BASE_URL: declare(CONV, httpUrl().optional(), "the HTTP channel driver's provider URL (needed with `CHANNEL_DRIVER=http`)"),
  CHANNEL_HTTP_TOKEN: declare(CONV, text().optional(), "bearer token the HTTP channel driver sends", { secret: true }),
  CHANNEL_HTTP_TIMEOUT_MS: declare(CONV, positiveInt().default(10_000), "how long the HTTP channel driver waits for the provider"),
  TWILIO_API_BASE_URL: declare(CONV, httpUrl().default("https://api.twilio.com"), "where messages on a Twilio connection are sent (the Messages API)"),
  WHATSAPP_GRAPH_BASE_URL: declare(
    CONV,
    httpUrl().default("https://graph.facebook.com"),
    "where messages on a WhatsApp Cloud connection are sent (the Graph API)",
  ),
  WHATSAPP_GRAPH_API_VERSION: declare(
    CONV,
    z
      .string()
      .regex(/^v\d+\.\d+$/, "must be a Graph API version like v23.0")
      .default("v23.0"),
    "the Graph API version WhatsApp Cloud messages are sent with",
  ),
  CHANNEL_PROVIDER_TIMEOUT_MS: declare(CONV, positiveInt().default(10_000), "how long a send through a connected provider (Twilio, WhatsApp Cloud) may take"),
  SEND_RECOVERY_INTERVAL_MS: declare(CONV, nonNegativeInt().default(30_000), "how often a server process looks for sends interrupted mid-way (0 turns it off)"),
  SLA_CHECK_INTERVAL_MS: declare(CONV, nonNegativeInt().default(30_000), "how often each server process checks handoff SLAs (0 turns it off)"),
  DEFAULT_PHONE_REGION: declare(
    CONV,
    z
      .string()
      .regex(/^[A-Za-z]{2}$/, "must be a two-letter country code")
      .transform((v) => v.toUpperCase())
      .optional(),
    "country assumed for phone numbers written without `+` (e.g. `US`)",
  ),
  CRM_TIMEOUT_MS: declare(CONV, positiveInt().default(10_000), "how long a CRM upstream call may take"),

  // Operations
  DEMO_SEED: declare(OPS, oneOf(["0", "1"]).optional(), "`1` seeds the demo tenant on start", { shown: "1 on the embedded database, else 0" }),
  LOG_LEVEL: declare(OPS, oneOf(["debug", "info", "warn", "silent"]).default("info"), "`debug`, `info`, `warn` or `silent`"),
  READINESS_TIMEOUT_MS: declare(
    OPS,
    positiveInt().default(2000),
    "how long `/readyz` waits for the database's answer before it reports the database failing (503)",
  ),
  METRICS_PORT: declare(
    OPS,
    portNumber().optional(),
    "serve Prometheus metrics at `/metrics` on this port, a listener of its own apart from `PORT`; unset: no metrics listener and nothing recorded",
  ),
  METRICS_HOST: declare(OPS, text().default("127.0.0.1"), "the metrics listener's address (keep it off the network tenants reach)"),
  METRICS_TOKEN: declare(
    OPS,
    text().min(16, "must be at least 16 characters").optional(),
    "when set, `/metrics` answers only requests with `Authorization: Bearer <token>`",
    {
      secret: true,
    },
  ),

  OTEL_EXPORTER_OTLP_ENDPOINT: declare(
    OPS,
    httpUrl().optional(),
    "send OpenTelemetry traces (OTLP over HTTP) to this collector base URL (`/v1/traces` is appended); unset: no tracing, and the SDK is never loaded",
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: declare(OPS, httpUrl().optional(), "the full traces URL, used as given instead of the base URL above"),
  OTEL_EXPORTER_OTLP_PROTOCOL: declare(
    OPS,
    oneOf(["http/protobuf", "http/json"]).default("http/protobuf"),
    "the encoding of trace exports: protobuf (the OTLP default; about a third of JSON's bytes) or `http/json`",
  ),
  OTEL_EXPORTER_OTLP_HEADERS: declare(OPS, text().optional(), "headers sent with each export, as `name=value,name2=value2` (a collector's API key)", {
    secret: true,
  }),
  OTEL_SERVICE_NAME: declare(OPS, text().default("tenant-data-platform"), "the `service.name` the spans are reported under"),
  OTEL_TRACES_SAMPLER: declare(
    OPS,
    oneOf(["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"]).optional(),
    "which requests are traced; unset: every request up to `TRACES_PER_SECOND` new traces a second, and any request continuing a caller's sampled `traceparent`; `parentbased_always_on` traces every request",
  ),
  OTEL_TRACES_SAMPLER_ARG: declare(
    OPS,
    text()
      .refine((v) => /^(0(\.\d+)?|1(\.0+)?)$/.test(v), "must be a ratio between 0 and 1")
      .optional(),
    "the ratio of the `*traceidratio` samplers, e.g. `0.1`",
  ),
  TRACES_PER_SECOND: declare(
    OPS,
    nonNegativeInt()
      .refine((n) => n <= 100_000, "must be at most 100000")
      .default(10),
    "with `OTEL_TRACES_SAMPLER` unset, at most this many new traces begin per second in each process: every request is traced up to it, requests beyond it are not; a request continuing a caller's sampled `traceparent` is always traced",
  ),

  // Retention and the tenant lifecycle (server/retention/, server/tenants/)
  RETENTION_MESSAGES_DAYS: declare(
    KEEP,
    retentionDays(365),
    "messages (texts and call transcripts) older than this many days are deleted; a tenant may set fewer days, never more (0: kept forever, and a tenant may set any period)",
  ),
  RETENTION_CALL_RECORDINGS_DAYS: declare(
    KEEP,
    retentionDays(90),
    "calls older than this many days lose their recording URL and summary (the call itself, its times and status stay); a tenant may set fewer (0: kept forever)",
  ),
  RETENTION_EVENTS_DAYS: declare(
    KEEP,
    retentionDays(30),
    "events older than this many days are deleted with their delivery logs (deliveries, attempts, request and response bodies), except while a delivery of theirs is still pending; a tenant may set fewer (0: kept forever)",
  ),
  RETENTION_AUDIT_LOG_DAYS: declare(
    KEEP,
    retentionDays(365),
    "audit-log entries older than this many days are deleted; a tenant may set fewer (0: kept forever)",
  ),
  RETENTION_NOTIFICATIONS_DAYS: declare(
    KEEP,
    retentionDays(90),
    "dashboard notifications older than this many days are deleted; a tenant may set fewer (0: kept forever)",
  ),
  RETENTION_PURGE_INTERVAL_MS: declare(
    KEEP,
    nonNegativeInt().default(3_600_000),
    "how often each server process runs the retention purge and continues due tenant deletions (0 turns it off here; the Inngest engine also runs it hourly)",
  ),
  RETENTION_PURGE_BATCH: declare(
    KEEP,
    z
      .string()
      .regex(/^[1-9][0-9]*$/, "must be an integer from 1 to 10000")
      .transform(Number)
      .refine((n) => n <= 10_000, "must be an integer from 1 to 10000")
      .default(500),
    "most rows one purge or deletion statement removes (each batch is its own short transaction; a purge's batches are smaller while one takes longer than 20 ms)",
  ),
  RETENTION_PURGE_PAUSE_MS: declare(
    KEEP,
    nonNegativeInt().default(20),
    "least pause between two batches of a purge or deletion; the pause is also at least three times as long as the batch took, so the purge works at most a quarter of the time and backs off when the database is busy",
  ),
  TENANT_DELETE_GRACE_HOURS: declare(
    KEEP,
    nonNegativeInt().default(72),
    "`tenant delete` suspends the tenant at once and deletes its rows after this many hours (`--now` skips the wait); `tenant resume` meanwhile cancels it",
  ),

  // Settings added by other parts of the code go above this line, in their group.
} as const;

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<N extends SettingName> = z.output<(typeof SETTINGS)[N]["schema"]>;

/** A malformed setting; the message names it (and its value, unless it is a secret). */
class SettingError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = "SettingError";
  }
}

const memo = new Map<string, { raw: string | undefined; value: unknown }>();
/** process.env's settings, parsed once per process: a read is one map lookup (no env access). */
const cached = new Map<string, unknown>();

function parseSetting(name: SettingName, raw: string | undefined): unknown {
  const declared: Declared<z.ZodType> = SETTINGS[name];
  const trimmed = raw?.trim();
  const result = declared.schema.safeParse(trimmed === "" ? undefined : trimmed);
  if (result.success) return result.data;
  const shown = declared.secret ? "" : `, got ${JSON.stringify(raw)}`;
  throw new SettingError(name, `${name} ${result.error.issues[0]?.message ?? "is invalid"}${shown}`);
}

/**
 * The setting's value (from `env`, default process.env); throws a SettingError naming it when
 * malformed. process.env is read once per setting and process (the environment of a server does not
 * change while it runs); code that changes process.env afterwards (tests, scripts) calls
 * `resetSettings()` or installs `resetSettingsOnEnvChange()`.
 */
export function setting<N extends SettingName>(name: N, env: Env = process.env): SettingValue<N> {
  if (env === process.env) {
    const value = cached.get(name);
    if (value !== undefined || cached.has(name)) return value as SettingValue<N>;
  }
  const raw = env[name];
  const hit = memo.get(name);
  let value: unknown;
  if (hit && hit.raw === raw) value = hit.value;
  else {
    value = parseSetting(name, raw);
    memo.set(name, { raw, value });
  }
  if (env === process.env) cached.set(name, value);
  return value as SettingValue<N>;
}

const watched = Symbol("settings watch process.env");

/** Forgets the cached values: the next read of each setting reads process.env again. */
export function resetSettings(): void {
  cached.clear();
}

/**
 * For tests and scripts that change process.env while the process runs: process.env becomes a proxy
 * that forgets the cached settings at every change, so a change is seen at the next read.
 */
export function resetSettingsOnEnvChange(): void {
  const env = process.env as Env & { [watched]?: true };
  if (env[watched]) return;
  process.env = new Proxy(env, {
    set(target, key, value) {
      cached.clear();
      return Reflect.set(target, key, value);
    },
    deleteProperty(target, key) {
      cached.clear();
      return Reflect.deleteProperty(target, key);
    },
    get(target, key) {
      return key === watched ? true : Reflect.get(target, key);
    },
  }) as NodeJS.ProcessEnv;
}
/**
 * Inngest's mode as its SDK reads `INNGEST_DEV`: a dev server for `1`, `true` or a URL (unsigned calls,
 * local use); otherwise a server that signs its calls (Inngest Cloud or self-hosted).
 */
export function inngestDevMode(env: Env = process.env): boolean {
  const raw = env.INNGEST_DEV?.trim().toLowerCase();
  return Boolean(raw) && raw !== "0" && raw !== "false" && raw !== "undefined";
}

/** Rules across settings (checked once each parsed): one problem per broken rule, naming what to set. */
function crossSettingProblems(env: Env): string[] {
  const problems: string[] = [];
  // Inngest is told where to call the app back; that URL must come from configuration, never from a request's Host.
  const inngestServer = setting("INNGEST_EVENT_KEY", env) || setting("INNGEST_SIGNING_KEY", env) || setting("INNGEST_BASE_URL", env);
  if (inngestServer && !inngestDevMode(env) && !setting("PUBLIC_BASE_URL", env) && !setting("INNGEST_SERVE_ORIGIN", env)) {
    problems.push(
      "PUBLIC_BASE_URL must be set when Inngest is configured (INNGEST_EVENT_KEY, INNGEST_SIGNING_KEY or INNGEST_BASE_URL): Inngest is registered at <PUBLIC_BASE_URL>/api/inngest (or set INNGEST_SERVE_ORIGIN)",
    );
  }
  return problems;
}

/** Parses every setting; throws one error listing every malformed one. Run it first thing at startup. */
export function checkSettings(env: Env = process.env): void {
  const problems: string[] = [];
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    try {
      setting(name, env);
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (!problems.length) problems.push(...crossSettingProblems(env));
  if (problems.length) throw new SettingError(problems.join(", "), `invalid settings:\n  ${problems.join("\n  ")}`);
}

/** For a process's entry point: a malformed setting prints which and exits 1 before anything starts. */
export function checkSettingsOrExit(env: Env = process.env): void {
  try {
    checkSettings(env);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

/** The README's settings table, generated from the declarations above. */
export function settingsTable(): string {
  const rows = ["| setting | default | effect |", "|---|---|---|"];
  let group = "";
  for (const [name, declared] of Object.entries(SETTINGS) as [SettingName, Declared<z.ZodType>][]) {
    if (declared.group !== group) {
      group = declared.group;
      rows.push(`| **${group}** | | |`);
    }
    rows.push(`| \`${name}\` | ${defaultText(declared)} | ${declared.doc} |`);
  }
  return rows.join("\n");
}

function defaultText(declared: Declared<z.ZodType>): string {
  if (declared.shown) return declared.shown;
  const value = declared.schema.parse(undefined);
  if (value === undefined) return "unset";
  if (typeof value === "boolean") return value ? "on" : "off";
  return `\`${String(value)}\``;
}
