// The breaker (server/db/availability.ts) must open only when the database cannot be reached.
// Behind a transaction pooler a client-side bug shows as statement errors the server itself sends:
// a prepared statement missing on this server connection (26000), or a Bind that does not fit the
// statement of that name there (08P01, protocol_violation, in the connection-failure class). Those
// are answers, not an outage; PgBouncer's own 08P01 when it cannot reach the server is one.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/bench/services";
import { isDatabaseUnavailable } from "../../server/lib/database-errors";
import { hasPgbouncer, type Pgbouncer, startPgbouncer } from "../helpers/pgbouncer";

const direct = () => process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL!;

/** The error `run` fails with on a connection of its own to `url`. */
async function errorOf(url: string, run: (client: pg.Client) => Promise<unknown>): Promise<Error & { code?: string; routine?: string }> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  try {
    await client.connect();
    await run(client);
  } catch (err) {
    return err as Error & { code?: string };
  } finally {
    await client.end().catch(() => {});
  }
  throw new Error("expected the call to fail");
}

describe.skipIf(!process.env.DATABASE_URL)("statement errors the server sends", () => {
  let bouncer: Pgbouncer | undefined;
  afterAll(async () => {
    await bouncer?.stop();
  });

  it("missing_prepared_statement_is_no_outage", async () => {
    const err = await errorOf(direct(), (c) => c.query("EXECUTE statement_prepared_on_another_connection"));
    expect(err.code).toBe("26000");
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it("bind_that_does_not_fit_the_named_statement_is_no_outage", async () => {
    // node-postgres parses a name once per connection; meanwhile the name came to mean another
    // statement there (as on a pooled server connection another client prepared it on).
    const err = await errorOf(direct(), async (c) => {
      await c.query({ name: "pooled_statement", text: "SELECT $1::int AS one", values: [1] });
      await c.query("DEALLOCATE pooled_statement; PREPARE pooled_statement(int, int) AS SELECT $1 + $2");
      await c.query({ name: "pooled_statement", text: "SELECT $1::int AS one", values: [1] });
    });
    expect(err.code).toBe("08P01");
    expect(err.message).toMatch(/bind message supplies 1 parameters, but prepared statement "pooled_statement" requires 2/);
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it.skipIf(!hasPgbouncer())("pgbouncer_without_its_server_is_an_outage", async () => {
    bouncer = await startPgbouncer(`postgresql://postgres@127.0.0.1:${await freePort()}/postgres`, { queryWaitTimeoutSeconds: 1 });
    const err = await errorOf(bouncer.url(direct()), (c) => c.query("SELECT 1"));
    expect({ code: err.code, message: err.message }).toEqual({ code: "08P01", message: "query_wait_timeout" });
    expect(isDatabaseUnavailable(err)).toBe(true);
  });
});
