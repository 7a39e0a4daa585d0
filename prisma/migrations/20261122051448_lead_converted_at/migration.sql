-- DropIndex
DROP INDEX "leads_tenant_id_status_updated_at_idx";

-- AlterTable
ALTER TABLE "leads" ADD COLUMN     "converted_at" TIMESTAMPTZ(3);

-- Leads converted before this column existed: their last change is the best record of when.
UPDATE "leads" SET "converted_at" = "updated_at" WHERE "status" = 'converted';

-- CreateIndex
CREATE INDEX "leads_tenant_id_converted_at_idx" ON "leads"("tenant_id", "converted_at");
