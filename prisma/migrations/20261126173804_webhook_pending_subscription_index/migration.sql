-- CreateIndex
CREATE INDEX "webhook_deliveries_pending_subscription_idx" ON "webhook_deliveries"("subscription_id") WHERE (status = 'pending' AND subscription_id IS NOT NULL);
