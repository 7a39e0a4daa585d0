-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "breaker_probe_at" TIMESTAMPTZ(6),
ADD COLUMN     "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "disabled_at" TIMESTAMPTZ(3),
ADD COLUMN     "disabled_reason" TEXT,
ADD COLUMN     "failing_since" TIMESTAMPTZ(3),
ADD COLUMN     "last_success_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "webhook_deliveries_locked_until_subscription_id_idx" ON "webhook_deliveries"("locked_until", "subscription_id");
