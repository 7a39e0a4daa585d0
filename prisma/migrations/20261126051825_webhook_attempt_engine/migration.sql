-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "engine" TEXT;
