-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "throttled" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "max_deliveries_per_second" INTEGER NOT NULL DEFAULT 50,
ADD COLUMN     "next_delivery_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP;
