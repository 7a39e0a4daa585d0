// A stand-in for an Inngest server, over real HTTP, for tests that drive the app's real
// `/api/inngest` endpoint in a running server process. Written from Inngest's SDK specification
// (SPEC below, pinned to the commit read) and the serve handler of the installed `inngest` package
// (4.24.0); each place where the specification leaves the server's behaviour open is marked GUESS
// with the line it follows.
//
// What it plays:
// - the event API (`POST /e/:event_key`): what the app sends, deduplicated by event id;
// - the sync (`POST /fn/register`): the app's functions and their configuration;
// - the async checkpoint API (`POST /v1/checkpoint/:run_id/async`), which this SDK version uses by
//   default when the call request carries `ctx.fn_id` (SPEC#L1940, SPEC#L2034);
// - the executor: one run per matching event, call requests signed with the signing key, memoized
//   step state, step op codes, retries per the function's `retries` with `X-Inngest-No-Retry` and
//   `Retry-After`, concurrency limits per key. Sleeps are fast-forwarded (recorded, not waited).
import { createHash, createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export const SPEC = "https://github.com/inngest/inngest/blob/253303cdffec27f6c70e208114305326baaa5dd7/docs/SDK_SPEC.md";

export type InngestEvent = { id: string; name: string; data: Record<string, unknown>; ts: number; user?: Record<string, unknown> };
type StepError = { name: string; message: string; stack?: string };
/** Memoized step state as sent in a call request (SPEC#L903-L925; a finished sleep is `null`, SPEC#L1319). */
type Memo = { data: unknown } | { error: StepError } | null;
type Op = { id: string; op: string; displayName?: string; name?: string; data?: unknown; error?: StepError; opts?: Record<string, unknown> };

export type FunctionConfig = {
  id: string;
  name?: string;
  triggers: ({ event: string; expression?: string } | { cron: string })[];
  steps: { step: { id: string; name: string; runtime: { type: string; url: string }; retries?: { attempts?: number } } };
  concurrency?: { key?: string; limit: number; scope?: string }[] | number;
  throttle?: { key?: string; limit: number; period: string; burst?: number };
  [k: string]: unknown;
};

/** One HTTP call request the executor made, and what came back. */
type CallRecord = {
  runId: string;
  stepId: string;
  attempt: number;
  status: number | null;
  noRetry: string | null;
  retryAfter: string | null;
  ops: Op[] | null;
  networkError?: string;
};

export type Run = {
  id: string;
  functionId: string;
  event: InngestEvent;
  steps: Record<string, Memo>;
  stack: string[];
  status: "running" | "completed" | "failed";
  output?: unknown;
  error?: unknown;
  calls: CallRecord[];
  /** Sleeps asked for, fast-forwarded: hashed id, display name, milliseconds. */
  sleeps: { id: string; name?: string; ms: number }[];
  /** Retries the executor scheduled, with the delay it would have waited (Retry-After, else its backoff). */
  retries: { attempt: number; delayMs: number; reason: string }[];
  done: Promise<void>;
  /** Async checkpoints received for this run. */
  checkpoints?: number;
};

/** The signing key's hashed form, sent as the SDK's bearer token (SPEC#L337-L352). */
export function hashSigningKey(key: string): string {
  const prefix = key.match(/^signkey-\w+-/)?.[0] ?? "";
  return (
    prefix +
    createHash("sha256")
      .update(Buffer.from(key.slice(prefix.length), "hex"))
      .digest("hex")
  );
}

/**
 * `X-Inngest-Signature` for `body`: `t=<unix seconds>&s=<hex HMAC-SHA256 of body + t>` (SPEC#L278-L283).
 * The HMAC key is the signing key without its `signkey-*-` prefix (SPEC#L327; the text says "the `s`
 * value", a slip: the SDK, inngest/helpers/net.js signWithNative, and the server,
 * pkg/execution/driver/httpdriver/util.go Sign, both key the HMAC with the signing key), as text.
 */
export function signBody(body: string, signingKey: string, at = Math.floor(Date.now() / 1000)): string {
  const key = signingKey.replace(/^signkey-\w+-/, "");
  return `t=${at}&s=${createHmac("sha256", key)
    .update(body + String(at))
    .digest("hex")}`;
}

/**
 * JSON in the JSON Canonicalization Scheme (RFC 8785: sorted keys, ES number and string forms).
 * GUESS (SPEC#L329): the SDK parses the body and signs its canonical form, so the harness sends
 * canonical bytes and signs exactly those — then raw-body and canonical verification agree.
 */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** A Time String (SPEC#L137-L141) or an ISO 8601 date (SPEC#L1304) in milliseconds from now. */
function durationMs(duration: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w)/g)];
  if (parts.length && parts.map((p) => p[0]).join("") === duration) return parts.reduce((ms, [, n, u]) => ms + Number(n) * units[u], 0);
  const at = Date.parse(duration);
  if (Number.isNaN(at)) throw new Error(`not a time string or date: ${duration}`);
  return Math.max(0, at - Date.now());
}

/** `Retry-After` in seconds or as a date (SPEC#L294-L295; pkg/execution/driver/httpdriver ParseRetry) in ms. */
function retryAfterMs(value: string): number {
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - Date.now());
}

/**
 * Whether a failed call is retried: `X-Inngest-No-Retry` decides when present, otherwise only a 4xx
 * is final (SPEC#L1016-L1024; pkg/execution/driver/httpdriver/util.go ShouldRetry). No answer at
 * all (a refused or cut connection) is retried.
 */
const shouldRetry = (status: number | null, noRetry: string | null) =>
  noRetry !== null && noRetry !== "" ? noRetry !== "true" : status === null || status < 400 || status > 499;

/**
 * The executor's backoff before retry `attempt` (1-based) when no Retry-After was given. GUESS:
 * the specification leaves it to the server; Inngest's is exponential with jitter, recorded here
 * only (sleeps and backoffs are fast-forwarded).
 */
const backoffMs = (attempt: number) => Math.min(2 ** attempt * 1000, 3_600_000);

/** `event.data.a.b`: the only key Expressions (CEL, SPEC#L133) the app uses; anything else fails loudly. */
function evaluateKey(expression: string, event: InngestEvent): string {
  const path = expression.match(/^event\.((?:[A-Za-z_][A-Za-z0-9_]*\.?)+)$/)?.[1];
  if (!path) throw new Error(`harness: unsupported key expression ${expression}`);
  let v: unknown = event;
  for (const part of path.split(".")) v = (v as Record<string, unknown> | undefined)?.[part];
  return JSON.stringify(v ?? null);
}

class Semaphores {
  private held = new Map<string, number>();
  private waiters: (() => void)[] = [];
  async acquire(keys: { key: string; limit: number }[]): Promise<() => void> {
    while (!keys.every((k) => (this.held.get(k.key) ?? 0) < k.limit)) await new Promise<void>((r) => this.waiters.push(r));
    for (const k of keys) this.held.set(k.key, (this.held.get(k.key) ?? 0) + 1);
    /** The most held at once per key, for tests. */
    for (const k of keys) this.most.set(k.key, Math.max(this.most.get(k.key) ?? 0, this.held.get(k.key)!));
    return () => {
      for (const k of keys) this.held.set(k.key, this.held.get(k.key)! - 1);
      for (const w of this.waiters.splice(0)) w();
    };
  }
  most = new Map<string, number>();
}

export type InngestServerOptions = {
  signingKey: string;
  eventKey: string;
  /**
   * Event POSTs to accept and then answer 502, as an event API that stored the events but whose
   * answer was lost: the SDK sends the same events again.
   */
  loseEventAnswers?: number;
  /** Calls answered as if the app were unreachable (no request is made), e.g. to fail a run for good. */
  unreachable?: (run: Run, stepId: string, attempt: number) => boolean;
  /** Called before each call request is sent (e.g. to restart a crashed app process). */
  beforeCall?: (run: Run, stepId: string, attempt: number) => Promise<void> | void;
};

export async function startInngestServer(opts: InngestServerOptions) {
  const hashedKey = hashSigningKey(opts.signingKey);
  const syncs: { query: string; headers: http.IncomingHttpHeaders; body: any; authorized: boolean }[] = [];
  /** Every event POST the app made: its headers, the events as sent, and those accepted (not duplicates). */
  const eventPosts: { path: string; headers: http.IncomingHttpHeaders; events: any[] }[] = [];
  const accepted: InngestEvent[] = [];
  const seenIds = new Set<string>();
  const runs: Run[] = [];
  /** What the SDK did that the specification forbids or leaves out (tests expect none). */
  const violations: string[] = [];
  const checkpoints: { runId: string; body: any }[] = [];
  const semaphores = new Semaphores();
  let functions: FunctionConfig[] = [];
  let appName = "";
  const fnUuids = new Map<string, string>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://inngest.test");
      const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        return send(400, { error: "body is not JSON" });
      }
      const authorized = req.headers.authorization === `Bearer ${hashedKey}`;
      // Sync (SPEC#L436-L460): the SDK's POST after a PUT to its endpoint, authorized with the hashed signing key (SPEC#L335).
      if (req.method === "POST" && url.pathname === "/fn/register") {
        syncs.push({ query: url.search, headers: req.headers, body, authorized });
        if (!authorized) return send(401, { error: "unauthorized" });
        if (body?.v !== "0.1" || body?.deployType !== "ping" || !body?.appName || !Array.isArray(body?.functions)) {
          return send(400, { error: "invalid sync payload" }); // SPEC#L812-L820
        }
        const modified = JSON.stringify(body.functions) !== JSON.stringify(functions);
        functions = body.functions;
        appName = body.appName;
        for (const f of functions) if (!fnUuids.has(f.id)) fnUuids.set(f.id, randomUUID());
        return send(200, { ok: true, modified }); // SPEC#L837-L846
      }
      // Event API (SPEC#L370): `/e/:event_key`, one event or an array.
      const eventKey = url.pathname.match(/^\/e\/([^/]+)$/)?.[1];
      if (req.method === "POST" && eventKey !== undefined) {
        if (decodeURIComponent(eventKey) !== opts.eventKey) return send(401, { error: "Event key not found", status: 401 });
        const list = Array.isArray(body) ? body : [body];
        eventPosts.push({ path: url.pathname, headers: req.headers, events: list });
        const ids: string[] = [];
        for (const e of list) {
          // An event's id makes it idempotent: "if an event with the same ID is sent again, it will
          // not trigger any functions" (SPEC#L160-L166). GUESS: forever here (Inngest keeps ids 24 h).
          const event: InngestEvent = { ...e, id: e.id || randomUUID(), ts: e.ts ?? Date.now(), data: e.data ?? {} };
          ids.push(event.id);
          if (e.id && seenIds.has(e.id)) continue;
          seenIds.add(event.id);
          accepted.push(event);
          trigger(event);
        }
        if ((opts.loseEventAnswers ?? 0) > 0) {
          opts.loseEventAnswers!--;
          return send(502, { error: "bad gateway", status: 502 });
        }
        return send(200, { ids, status: 200 }); // the SDK's sendEventResponseSchema
      }
      // Async checkpoints (SPEC#L2034-L2072): step results the SDK reports while it keeps running.
      const checkpointRun = url.pathname.match(/^\/v1\/checkpoint\/([^/]+)\/async$/)?.[1];
      if (req.method === "POST" && checkpointRun) {
        if (!authorized) return send(401, { error: "unauthorized" });
        checkpoints.push({ runId: checkpointRun, body });
        const run = runs.find((r) => r.id === checkpointRun);
        if (!run) return send(404, { error: "run not found" });
        run.checkpoints = (run.checkpoints ?? 0) + 1;
        for (const op of body?.steps ?? []) {
          if (op.op !== "StepRun") {
            violations.push(`checkpoint with async op ${op.op}`);
            return send(400, { error: `op ${op.op} cannot be checkpointed` });
          }
          memoize(run, op.id, { data: op.data });
        }
        return send(200, {});
      }
      send(404, { error: "not found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** Starts a run of every function an event triggers (its name, and its expression if any). */
  function trigger(event: InngestEvent) {
    for (const f of functions)
      if (f.triggers.some((t) => "event" in t && t.event === event.name && (!t.expression || matches(t.expression, event)))) startRun(f.id, event);
  }

  /** `event.a.b == 'x'`: the only trigger Expression (CEL, SPEC#L133) the SDK registers (for onFailure); anything else fails loudly. */
  function matches(expression: string, event: InngestEvent): boolean {
    const m = expression.match(/^event\.([\w.]+)\s*==\s*'([^']*)'$/);
    if (!m) {
      violations.push(`unsupported trigger expression ${expression}`);
      return false;
    }
    let v: unknown = event;
    for (const part of m[1].split(".")) v = (v as Record<string, unknown> | undefined)?.[part];
    return v === m[2];
  }

  /**
   * A run failed for good: Inngest sends `inngest/function.failed` (SPEC#L2253-L2259), id the run id,
   * data `{ function_id, run_id, event, error }` (pkg/execution/executor/finalize.go functionFinishedData).
   */
  function emitFailed(run: Run) {
    if (run.event.name.startsWith("inngest/function.")) return;
    const event: InngestEvent = {
      id: run.id,
      name: "inngest/function.failed",
      ts: Date.now(),
      data: { function_id: run.functionId, run_id: run.id, event: run.event, error: run.error },
    };
    if (seenIds.has(event.id)) return;
    seenIds.add(event.id);
    accepted.push(event);
    trigger(event);
  }

  function memoize(run: Run, id: string, memo: Memo) {
    if (id in run.steps) return;
    run.steps[id] = memo;
    run.stack.push(id);
  }

  function config(functionId: string): FunctionConfig {
    const f = functions.find((x) => x.id === functionId);
    if (!f) throw new Error(`harness: function ${functionId} is not synced`);
    return f;
  }

  function concurrencyKeys(f: FunctionConfig, event: InngestEvent) {
    const list = typeof f.concurrency === "number" ? [{ limit: f.concurrency }] : (f.concurrency ?? []);
    return list.map((c, i) => ({ key: `${f.id}#${i}#${c.key ? evaluateKey(c.key, event) : ""}`, limit: c.limit }));
  }

  /** The body of a call request (SPEC#L899-L962 and the executor's SDKRequest, pkg/execution/driver/request.go). */
  function callBody(run: Run, stepId: string, attempt: number, maxAttempts: number, disableImmediate: boolean) {
    return {
      event: run.event,
      events: [run.event],
      steps: run.steps,
      ctx: {
        fn_id: fnUuids.get(run.functionId),
        run_id: run.id,
        env: "test",
        step_id: stepId,
        attempt,
        max_attempts: maxAttempts,
        stack: { stack: run.stack, current: run.stack.length - 1 },
        qi_id: `${run.id}:${stepId}`,
        disable_immediate_execution: disableImmediate,
        use_api: false,
      },
      version: 2,
      use_api: false,
    };
  }

  /** One signed call request; `signature` overrides the header (tests of refusal). */
  async function post(url: string, body: unknown, signature?: string | null) {
    const text = canonicalJson(body);
    const headers: Record<string, string> = { "content-type": "application/json", "x-inngest-server-kind": "cloud" };
    const sig = signature === undefined ? signBody(text, opts.signingKey) : signature;
    if (sig !== null) headers["x-inngest-signature"] = sig;
    return fetch(url, { method: "POST", headers, body: text });
  }

  function stepUrl(f: FunctionConfig, stepId: string) {
    const u = new URL(f.steps.step.runtime.url);
    u.searchParams.set("stepId", stepId); // SPEC#L545-L556, SPEC#L1259-L1263
    return u.toString();
  }

  async function execute(run: Run) {
    const f = config(run.functionId);
    // `retries.attempts` is the number of retries: the server runs a step at most attempts + 1 times,
    // 4 retries when absent (pkg/sdk/function.go, pkg/inngest/function_step.go RetryCount,
    // pkg/inngest/function.go MaxAttempts). GUESS: SPEC#L560-L564 reads it as attempts (default 4,
    // "3 retries"); the server's code and the SDK (`retries: n` is sent as `attempts: n`) agree with each other, so followed here.
    const maxAttempts = (f.steps.step.retries?.attempts ?? 4) + 1;
    let stepId = "step";
    let attempt = 0;
    let disableImmediate = false;
    const fail = (error: unknown) => {
      run.status = "failed";
      run.error = error;
    };
    const retry = (reason: string, retryAfter: string | null): boolean => {
      if (attempt + 1 >= maxAttempts) return false;
      attempt++;
      run.retries.push({ attempt, delayMs: retryAfter ? retryAfterMs(retryAfter) : backoffMs(attempt), reason });
      return true;
    };
    for (let n = 0; n < 2_000 && run.status === "running"; n++) {
      await opts.beforeCall?.(run, stepId, attempt);
      const release = await semaphores.acquire(concurrencyKeys(f, run.event));
      const checkpointsBefore = run.checkpoints ?? 0;
      const record: CallRecord = { runId: run.id, stepId, attempt, status: null, noRetry: null, retryAfter: null, ops: null };
      run.calls.push(record);
      let text = "";
      let res: Response | null = null;
      try {
        if (opts.unreachable?.(run, stepId, attempt)) throw new Error("connect ECONNREFUSED (harness: unreachable)");
        res = await post(stepUrl(f, stepId), callBody(run, stepId, attempt, maxAttempts, disableImmediate));
        text = await res.text();
      } catch (err) {
        record.networkError = String((err as Error)?.cause ?? err);
      } finally {
        release();
      }
      // A checkpoint during the call resets the retry count: the steps after it start their own (SPEC#L2064).
      if ((run.checkpoints ?? 0) > checkpointsBefore) attempt = 0;
      if (!res || record.networkError) {
        if (!retry(`no answer: ${record.networkError}`, null)) fail({ message: record.networkError });
        continue;
      }
      record.status = res.status;
      record.noRetry = res.headers.get("x-inngest-no-retry");
      record.retryAfter = res.headers.get("retry-after");
      // Every response carries the SDK and execution version (SPEC#L305-L312).
      if (!res.headers.get("x-inngest-sdk")) violations.push(`${res.status} without X-Inngest-Sdk`);
      if (res.headers.get("x-inngest-req-version") !== "2")
        violations.push(`${res.status} with X-Inngest-Req-Version ${res.headers.get("x-inngest-req-version")}`);
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = text;
      }
      if (res.status === 200) {
        // The function returned (SPEC#L1010).
        run.status = "completed";
        run.output = parsed;
        break;
      }
      if (res.status !== 206) {
        // An error (SPEC#L1012-L1024): retried unless X-Inngest-No-Retry: true, after Retry-After if given.
        if (!shouldRetry(res.status, record.noRetry) || !retry(`${res.status}`, record.retryAfter)) fail(parsed);
        continue;
      }
      const ops: Op[] = Array.isArray(parsed) ? parsed : [parsed];
      record.ops = ops;
      const planned: Op[] = [];
      let next = "step";
      for (const op of ops) {
        switch (op.op) {
          case "StepRun":
          case "Step": // SPEC#L1240-L1248, SPEC#L1265-L1273
            memoize(run, op.id, { data: op.data ?? null });
            attempt = 0;
            break;
          case "StepPlanned": // SPEC#L1250-L1259: run it in its own call request
            planned.push(op);
            break;
          case "Sleep": {
            // SPEC#L1302-L1319: called again once the time has passed, the step memoized as null. Fast-forwarded.
            // The duration is `opts.duration` (SPEC#L1308-L1316); this SDK puts it in `name`, which the server reads
            // when `opts.duration` is empty (pkg/execution/state/opcode.go SleepDuration: "fallback for v1/2 of the TS SDK").
            const duration = String((op.opts?.duration as string | undefined) || op.name);
            run.sleeps.push({ id: op.id, name: op.displayName, ms: durationMs(duration) });
            memoize(run, op.id, null);
            attempt = 0;
            break;
          }
          case "StepError": // a step's error the SDK asks to retry (SPEC#L1275-L1286; the SDK's buildStepErrorOp)
            if (!shouldRetry(res.status, record.noRetry) || !retry(`step ${op.displayName ?? op.id}: ${op.error?.message}`, record.retryAfter)) {
              memoize(run, op.id, { error: op.error! });
              attempt = 0;
            } else next = op.id; // GUESS: the retry asks for that step by its id (as for a planned step, SPEC#L1259-L1263)
            break;
          case "StepFailed": // its last attempt failed: memoized as the error (SPEC#L1195-L1206)
            memoize(run, op.id, { error: op.error! });
            attempt = 0;
            break;
          case "RunComplete":
            run.status = "completed";
            run.output = op.data;
            break;
          case "StepNotFound":
            if (!retry(`step not found ${op.id}`, null)) fail(op);
            next = stepId;
            break;
          default:
            // WaitForEvent, InvokeFunction, gateways: the app uses none of them.
            violations.push(`unsupported op ${op.op}`);
            fail({ message: `harness: unsupported op ${op.op}` });
        }
      }
      if (planned.length > 1) disableImmediate = true; // SPEC#L1462-L1466
      if (planned.length) next = planned[0].id; // GUESS: parallel planned steps run one after another here
      stepId = next;
    }
    if (run.status === "running") fail({ message: "harness: too many calls" });
    if (run.status === "failed") emitFailed(run);
  }

  function startRun(functionId: string, event: InngestEvent): Run {
    const run = {
      id: `run-${randomUUID()}`,
      functionId,
      event,
      steps: {},
      stack: [],
      status: "running",
      calls: [],
      sleeps: [],
      retries: [],
    } as unknown as Run;
    runs.push(run);
    run.done = execute(run).catch((err) => {
      run.status = "failed";
      run.error = { message: String(err) };
    });
    return run;
  }

  return {
    origin,
    /** Environment that points the app at this server (SPEC#L227-L245). */
    env: () => ({ INNGEST_BASE_URL: origin, INNGEST_EVENT_KEY: opts.eventKey, INNGEST_SIGNING_KEY: opts.signingKey, INNGEST_DEV: undefined }),
    syncs,
    eventPosts,
    accepted,
    runs,
    violations,
    checkpoints,
    /** The most call requests in flight at once per concurrency key (`<fn>#<index>#<key value>`). */
    concurrencyHighWater: semaphores.most,
    functions: () => functions,
    appName: () => appName,
    /** Asks the app to sync, as Inngest or a deploy hook does: a PUT to its endpoint (SPEC#L423-L434). */
    async sync(appEndpoint: string) {
      const res = await fetch(appEndpoint, { method: "PUT", headers: { "x-inngest-server-kind": "cloud" } });
      return { status: res.status, body: await res.json() };
    },
    /** Runs a function as its cron would (the event Inngest sends for a schedule). */
    trigger(functionId: string, event: Partial<InngestEvent> = { name: "inngest/scheduled.timer", data: { cron: "manual" } }): Run {
      return startRun(functionId, { id: randomUUID(), ts: Date.now(), data: {}, name: "inngest/scheduled.timer", ...event } as InngestEvent);
    },
    /**
     * The console's "Rerun": a new run of the same function with the same event, fresh state.
     * GUESS: the specification does not cover reruns; Inngest's console starts a new run id with the
     * original event and no memoized steps, and sends no event.
     */
    rerun(run: Run): Run {
      return startRun(run.functionId, run.event);
    },
    /** Sends one call request for `functionId` with the given signature header (null: none). */
    async rawCall(functionId: string, signature: (body: string) => string | null) {
      const f = config(functionId);
      const event: InngestEvent = { id: randomUUID(), name: "test", data: {}, ts: Date.now() };
      const fake = { id: `run-${randomUUID()}`, functionId, event, steps: {}, stack: [] } as unknown as Run;
      const body = callBody(fake, "step", 0, 1, false);
      const res = await post(stepUrl(f, "step"), body, signature(canonicalJson(body)));
      return { status: res.status, text: await res.text(), headers: res.headers };
    },
    /** Resolves when every run started so far (and any they led to) has finished. */
    async settled(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const open = runs.filter((r) => r.status === "running");
        if (!open.length) return;
        if (Date.now() > until) throw new Error(`${open.length} Inngest runs still running`);
        await Promise.race([Promise.all(open.map((r) => r.done)), new Promise((r) => setTimeout(r, 200))]);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type InngestServer = Awaited<ReturnType<typeof startInngestServer>>;
