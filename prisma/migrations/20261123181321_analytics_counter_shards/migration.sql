-- AlterTable
ALTER TABLE "analytics_daily_counts" DROP CONSTRAINT "analytics_daily_counts_pkey",
ADD COLUMN     "shard" SMALLINT NOT NULL DEFAULT 0,
ADD CONSTRAINT "analytics_daily_counts_pkey" PRIMARY KEY ("tenant_id", "day", "metric", "shard");

-- Sharded counters (hand-written, as Prisma does not model functions or triggers). Before, every
-- insert of a tenant's messages upserted one (tenant, day, metric) row and held its lock until
-- commit, so a tenant's concurrent inserts ran one at a time. Now an insert adds to the shard of
-- its database connection (backend pid modulo 16; a connection runs one transaction at a time, so
-- two concurrent inserts share a row only when their pids collide), and the rollup sums the shards.
-- Decrements (deletes, a moved row) subtract from one existing shard, the lowest: they only UPDATE,
-- since when a tenant is deleted its counter rows may already be gone (an INSERT would then violate
-- the tenant foreign key). A shard may go negative; the per-day sum stays exact.
CREATE OR REPLACE FUNCTION analytics_shard() RETURNS SMALLINT
LANGUAGE sql STABLE AS $$ SELECT (pg_backend_pid() % 16)::smallint $$;

CREATE OR REPLACE FUNCTION analytics_bump(p_tenant UUID, p_at TIMESTAMPTZ, p_metric TEXT, p_delta INTEGER) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_delta > 0 THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, shard, count)
    VALUES (p_tenant, (p_at AT TIME ZONE 'UTC')::date, p_metric, analytics_shard(), p_delta)
    ON CONFLICT (tenant_id, day, metric, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSE
    UPDATE analytics_daily_counts c SET count = c.count + p_delta
    WHERE c.tenant_id = p_tenant AND c.day = (p_at AT TIME ZONE 'UTC')::date AND c.metric = p_metric
      AND c.shard = (SELECT min(s.shard) FROM analytics_daily_counts s
                     WHERE s.tenant_id = p_tenant AND s.day = (p_at AT TIME ZONE 'UTC')::date AND s.metric = p_metric);
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION analytics_count_messages() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, shard, count)
    SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'messages.' || direction, analytics_shard(), count(*)::int
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, day, metric, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE analytics_daily_counts c SET count = c.count - d.n
    FROM (SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, 'messages.' || direction AS metric, count(*)::int AS n
          FROM old_rows GROUP BY 1, 2, 3) d
    WHERE c.tenant_id = d.tenant_id AND c.day = d.day AND c.metric = d.metric
      AND c.shard = (SELECT min(s.shard) FROM analytics_daily_counts s WHERE s.tenant_id = d.tenant_id AND s.day = d.day AND s.metric = d.metric);
  ELSE
    PERFORM analytics_bump(OLD.tenant_id, OLD.created_at, 'messages.' || OLD.direction, -1);
    PERFORM analytics_bump(NEW.tenant_id, NEW.created_at, 'messages.' || NEW.direction, 1);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION analytics_count_conversations() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, shard, count)
    SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'conversations.' || channel, analytics_shard(), count(*)::int
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, day, metric, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE analytics_daily_counts c SET count = c.count - d.n
    FROM (SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, 'conversations.' || channel AS metric, count(*)::int AS n
          FROM old_rows GROUP BY 1, 2, 3) d
    WHERE c.tenant_id = d.tenant_id AND c.day = d.day AND c.metric = d.metric
      AND c.shard = (SELECT min(s.shard) FROM analytics_daily_counts s WHERE s.tenant_id = d.tenant_id AND s.day = d.day AND s.metric = d.metric);
  ELSE
    PERFORM analytics_bump(OLD.tenant_id, OLD.created_at, 'conversations.' || OLD.channel, -1);
    PERFORM analytics_bump(NEW.tenant_id, NEW.created_at, 'conversations.' || NEW.channel, 1);
  END IF;
  RETURN NULL;
END
$$;
