-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "inngest_run_id" TEXT;
