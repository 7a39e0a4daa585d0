-- AlterTable
ALTER TABLE "events" ADD COLUMN     "request_id" TEXT,
ADD COLUMN     "trace_parent" TEXT;
