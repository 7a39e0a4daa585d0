-- DropIndex
DROP INDEX "messages_tenant_id_created_at_idx";

-- CreateIndex
CREATE INDEX "appointments_tenant_id_status_updated_at_idx" ON "appointments"("tenant_id", "status", "updated_at");

-- CreateIndex
CREATE INDEX "conversations_tenant_id_closed_at_idx" ON "conversations"("tenant_id", "closed_at");

-- CreateIndex
CREATE INDEX "leads_tenant_id_qualified_at_idx" ON "leads"("tenant_id", "qualified_at");

-- CreateIndex
CREATE INDEX "leads_tenant_id_handoff_requested_at_idx" ON "leads"("tenant_id", "handoff_requested_at");

-- CreateIndex
CREATE INDEX "leads_tenant_id_status_updated_at_idx" ON "leads"("tenant_id", "status", "updated_at");

-- CreateIndex
CREATE INDEX "messages_tenant_id_created_at_direction_idx" ON "messages"("tenant_id", "created_at", "direction");
