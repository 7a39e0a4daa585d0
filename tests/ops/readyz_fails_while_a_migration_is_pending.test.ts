// With SKIP_MIGRATIONS=1 a process starts on a database a migration short; /readyz then answers 503
// naming the migrations (so a load balancer sends it nothing) until the migration is applied, and
// turns 200 at the next probe after, without a restart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../../scripts/bench/services";
import { startMount } from "../helpers/http-mounts";
import { PostgresServer } from "../helpers/postgres-server";

const checks = (migrations: string) => ({ shutdown: "ok", database: "ok", migrations, webhook_engine: "ok", rate_limit_store: "memory" });

describe.skipIf(!process.env.DATABASE_URL)("/readyz and pending migrations", () => {
  let cluster: PostgresServer;
  let server: Running;
  let lastMigration: Record<string, unknown>;

  beforeAll(async () => {
    cluster = await PostgresServer.start();
    // The newest migration "not applied": its record removed (its schema changes stay, harmlessly).
    [lastMigration] = await cluster.query(
      "DELETE FROM _prisma_migrations WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations) RETURNING *",
    );
    server = await startMount("lean", { DATABASE_URL: cluster.url, SKIP_MIGRATIONS: "1", REDIS_URL: undefined, UPSTASH_REDIS_REST_URL: undefined });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
  });

  const readyz = async () => {
    const res = await fetch(`${server.url}/readyz`);
    return { status: res.status, body: await res.json() };
  };

  it("503_naming_the_migrations_until_the_migration_is_applied_then_200", async () => {
    expect(await readyz()).toEqual({ status: 503, body: { status: "not_ready", failing: ["migrations"], checks: checks("pending") } });
    expect(await readyz()).toEqual({ status: 503, body: { status: "not_ready", failing: ["migrations"], checks: checks("pending") } });
    const columns = Object.keys(lastMigration);
    await cluster.query(
      `INSERT INTO _prisma_migrations (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`,
      Object.values(lastMigration),
    );
    expect(await readyz()).toEqual({ status: 200, body: { status: "ready", failing: [], checks: checks("ok") } });
  }, 60_000);
});
