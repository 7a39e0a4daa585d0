-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "possible_repeat" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "attempt_started_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscription_id_status_seq_idx" ON "webhook_deliveries"("subscription_id", "status", "seq");
