-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "delete_after" TIMESTAMPTZ(3),
ADD COLUMN     "retention_audit_log_days" INTEGER,
ADD COLUMN     "retention_call_recordings_days" INTEGER,
ADD COLUMN     "retention_events_days" INTEGER,
ADD COLUMN     "retention_messages_days" INTEGER,
ADD COLUMN     "retention_notifications_days" INTEGER,
ADD COLUMN     "suspended_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "calls_tenant_id_created_at_idx" ON "calls"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_attempts_tenant_id_created_at_idx" ON "webhook_attempts"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

-- Analytics totals count what happened (hand-written: Prisma does not model functions). The
-- retention purge and tenant deletion delete rows inside transactions that set
-- `app.keep_analytics_counts` to 'on' (transaction-local): their deletes leave the daily counters as
-- they are, so a rollup still counts the purged messages and conversations. Any other delete
-- subtracts as before.
CREATE OR REPLACE FUNCTION analytics_count_messages() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_daily_counts AS c (tenant_id, day, metric, shard, count)
    SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, 'messages.' || direction, analytics_shard(), count(*)::int
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, day, metric, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
  ELSIF TG_OP = 'DELETE' THEN
    IF coalesce(current_setting('app.keep_analytics_counts', true), '') = 'on' THEN
      RETURN NULL;
    END IF;
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
    IF coalesce(current_setting('app.keep_analytics_counts', true), '') = 'on' THEN
      RETURN NULL;
    END IF;
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
