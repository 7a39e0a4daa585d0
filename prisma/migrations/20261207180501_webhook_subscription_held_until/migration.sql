-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "held_until" TIMESTAMPTZ(6);
