// A booking's one statement runs on the statement connections, not on the one read connection that
// every request's key lookup and the hot lists pipeline on (server/db/client.ts): a booking that
// waits on a lock (a repeat of a tool call whose first call has not committed) must not hold up the
// requests queued behind it. PostgreSQL only: the embedded database runs one statement at a time.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { callTool } from "../helpers/agent";
import { eventually } from "../helpers/webhook-consumer";

const HOUR = 3_600_000;

describe.runIf(process.env.DATABASE_URL)("a booking waiting on a lock", () => {
  const clients: pg.Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end()));
  });

  it("key_lookups_and_reads_of_other_requests_answer_while_a_booking_waits_on_its_tool_call_lock", async () => {
    const { tenantId, key } = await tenantWithKey(["read", "appointments:write"]);
    // Another transaction holds the claim of this tool call id, uncommitted: the booking's claim waits for it.
    const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
    clients.push(holder);
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query(
      "INSERT INTO tool_calls (id, tenant_id, tool, tool_call_id) VALUES (gen_random_uuid(), $1, 'book_appointment', 'held-by-another-transaction')",
      [tenantId],
    );
    const start = Date.now() + 24 * HOUR;
    const booking = callTool(key, "book_appointment", {
      customer_name: "Ali Reza",
      customer_phone: "+971501234567",
      scheduled_start: new Date(start).toISOString(),
      scheduled_end: new Date(start + HOUR).toISOString(),
      tool_call_id: "held-by-another-transaction",
    });
    // The booking has reached the lock: a backend waits on the holder's transaction. Asked on another
    // connection: inside the holder's transaction pg_stat_activity would stay as it first read it.
    const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
    clients.push(watcher);
    await watcher.connect();
    const holderPid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
    await eventually(
      async () =>
        (await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [holderPid])).rows[0].n >
        0,
    );
    let bookingSettled = false;
    void booking.then(() => (bookingSettled = true));

    // Five reads (each its key lookup and a search) answer while the booking still waits.
    const reads = await Promise.race([
      Promise.all(Array.from({ length: 5 }, () => callTool(key, "search_offerings", { query: "marina" }))),
      new Promise<"held up">((r) => setTimeout(() => r("held up"), 5_000)),
    ]);
    expect(reads === "held up" ? reads : reads.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(bookingSettled).toBe(false);

    // The other transaction rolls back: its claim is gone, so the waiting booking books.
    await holder.query("ROLLBACK");
    const booked = await booking;
    expect(booked.status).toBe(200);
    expect(booked.body.status).toBe("confirmed");
  }, 30_000);
});
