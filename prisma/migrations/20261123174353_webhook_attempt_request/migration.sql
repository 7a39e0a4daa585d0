-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "request_body" VARCHAR(4096),
ADD COLUMN     "request_headers" JSONB;
