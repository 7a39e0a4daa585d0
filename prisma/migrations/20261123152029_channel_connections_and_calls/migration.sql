-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "provider" VARCHAR(40),
ADD COLUMN     "provider_message_id" VARCHAR(200);

-- CreateTable
CREATE TABLE "channel_connections" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" VARCHAR(40) NOT NULL,
    "channel" VARCHAR(20) NOT NULL,
    "address" VARCHAR(64) NOT NULL,
    "status" VARCHAR(20) NOT NULL DEFAULT 'active',
    "credentials_encrypted" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channel_connections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "calls" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "provider" VARCHAR(40) NOT NULL,
    "provider_call_id" VARCHAR(200) NOT NULL,
    "direction" VARCHAR(20) NOT NULL,
    "status" VARCHAR(20) NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "answered_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "duration_seconds" INTEGER,
    "end_reason" VARCHAR(200),
    "recording_url" VARCHAR(2048),
    "summary" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "calls_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "channel_connections_tenant_id_created_at_id_idx" ON "channel_connections"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "channel_connections_provider_address_key" ON "channel_connections"("provider", "address");

-- CreateIndex
CREATE INDEX "calls_conversation_id_started_at_id_idx" ON "calls"("conversation_id", "started_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "calls_tenant_id_provider_provider_call_id_key" ON "calls"("tenant_id", "provider", "provider_call_id");

-- CreateIndex
CREATE UNIQUE INDEX "messages_tenant_id_provider_provider_message_id_key" ON "messages"("tenant_id", "provider", "provider_message_id");

-- AddForeignKey
ALTER TABLE "channel_connections" ADD CONSTRAINT "channel_connections_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calls" ADD CONSTRAINT "calls_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calls" ADD CONSTRAINT "calls_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: the closed value sets, enforced by the database too (Prisma does not model checks).
ALTER TABLE "channel_connections"
  ADD CONSTRAINT "channel_connections_provider_check" CHECK ("provider" IN ('twilio', 'whatsapp_cloud', 'retell', 'vapi')),
  ADD CONSTRAINT "channel_connections_channel_check" CHECK ("channel" IN ('voice', 'sms', 'whatsapp')),
  ADD CONSTRAINT "channel_connections_status_check" CHECK ("status" IN ('active', 'disabled'));
ALTER TABLE "calls"
  ADD CONSTRAINT "calls_direction_check" CHECK ("direction" IN ('inbound', 'outbound')),
  ADD CONSTRAINT "calls_status_check" CHECK ("status" IN ('ringing', 'in_progress', 'completed', 'missed')),
  ADD CONSTRAINT "calls_duration_check" CHECK ("duration_seconds" IS NULL OR "duration_seconds" >= 0);
