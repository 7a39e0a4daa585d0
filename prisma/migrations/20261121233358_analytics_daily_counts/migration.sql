-- CreateTable
CREATE TABLE "analytics_daily_counts" (
    "tenant_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "metric" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "analytics_daily_counts_pkey" PRIMARY KEY ("tenant_id","day","metric")
);

-- AddForeignKey
ALTER TABLE "analytics_daily_counts" ADD CONSTRAINT "analytics_daily_counts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Counters kept exact by triggers (hand-written, as Prisma does not model functions or triggers).
-- INSERT and DELETE are statement-level over transition tables, so a bulk insert costs one upsert
-- per (tenant, day, metric). The counted columns (tenant_id, created_at, direction / channel) never
-- change in the application, and a row-level trigger keeps the counts right if one ever does.
-- Decrements only UPDATE: when a tenant is deleted its counter rows may already be gone.
CREATE FUNCTION analytics_bump(p_tenant UUID, p_at TIMESTAMPTZ, p_metric TEXT, p_delta INTEGER) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_delta > 0 THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, count)
    VALUES (p_tenant, (p_at AT TIME ZONE 'UTC')::date, p_metric, p_delta)
    ON CONFLICT (tenant_id, day, metric) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSE
    UPDATE analytics_daily_counts SET count = count + p_delta
    WHERE tenant_id = p_tenant AND day = (p_at AT TIME ZONE 'UTC')::date AND metric = p_metric;
  END IF;
END
$$;

CREATE FUNCTION analytics_count_messages() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, count)
    SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'messages.' || direction, count(*)::int
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, day, metric) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE analytics_daily_counts c SET count = c.count - d.n
    FROM (SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, 'messages.' || direction AS metric, count(*)::int AS n
          FROM old_rows GROUP BY 1, 2, 3) d
    WHERE c.tenant_id = d.tenant_id AND c.day = d.day AND c.metric = d.metric;
  ELSE
    PERFORM analytics_bump(OLD.tenant_id, OLD.created_at, 'messages.' || OLD.direction, -1);
    PERFORM analytics_bump(NEW.tenant_id, NEW.created_at, 'messages.' || NEW.direction, 1);
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION analytics_count_conversations() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, count)
    SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'conversations.' || channel, count(*)::int
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, day, metric) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE analytics_daily_counts c SET count = c.count - d.n
    FROM (SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, 'conversations.' || channel AS metric, count(*)::int AS n
          FROM old_rows GROUP BY 1, 2, 3) d
    WHERE c.tenant_id = d.tenant_id AND c.day = d.day AND c.metric = d.metric;
  ELSE
    PERFORM analytics_bump(OLD.tenant_id, OLD.created_at, 'conversations.' || OLD.channel, -1);
    PERFORM analytics_bump(NEW.tenant_id, NEW.created_at, 'conversations.' || NEW.channel, 1);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER analytics_messages_insert AFTER INSERT ON "messages"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics_count_messages();
CREATE TRIGGER analytics_messages_delete AFTER DELETE ON "messages"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics_count_messages();
CREATE TRIGGER analytics_messages_update AFTER UPDATE OF tenant_id, created_at, direction ON "messages"
  FOR EACH ROW WHEN (OLD.tenant_id IS DISTINCT FROM NEW.tenant_id OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.direction IS DISTINCT FROM NEW.direction)
  EXECUTE FUNCTION analytics_count_messages();

CREATE TRIGGER analytics_conversations_insert AFTER INSERT ON "conversations"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics_count_conversations();
CREATE TRIGGER analytics_conversations_delete AFTER DELETE ON "conversations"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION analytics_count_conversations();
CREATE TRIGGER analytics_conversations_update AFTER UPDATE OF tenant_id, created_at, channel ON "conversations"
  FOR EACH ROW WHEN (OLD.tenant_id IS DISTINCT FROM NEW.tenant_id OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.channel IS DISTINCT FROM NEW.channel)
  EXECUTE FUNCTION analytics_count_conversations();

-- Rows that existed before the triggers.
INSERT INTO analytics_daily_counts (tenant_id, day, metric, count)
SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'messages.' || direction, count(*)::int FROM "messages" GROUP BY 1, 2, 3
UNION ALL
SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'conversations.' || channel, count(*)::int FROM "conversations" GROUP BY 1, 2, 3;
