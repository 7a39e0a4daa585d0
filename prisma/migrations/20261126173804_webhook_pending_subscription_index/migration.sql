-- CreateIndex
-- IF NOT EXISTS: on a large table, build it first with CREATE INDEX CONCURRENTLY (docs/operations.md,
-- "Deploying"); this statement then has nothing to do and holds no writes.
CREATE INDEX IF NOT EXISTS "webhook_deliveries_pending_subscription_idx" ON "webhook_deliveries"("subscription_id") WHERE (status = 'pending' AND subscription_id IS NOT NULL);
