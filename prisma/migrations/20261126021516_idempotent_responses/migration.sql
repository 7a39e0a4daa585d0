-- CreateTable
CREATE TABLE "idempotent_responses" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "request_fingerprint" VARCHAR(64) NOT NULL,
    "status" SMALLINT NOT NULL,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotent_responses_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "idempotent_responses_created_at_idx" ON "idempotent_responses"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotent_responses_tenant_id_api_key_id_key_key" ON "idempotent_responses"("tenant_id", "api_key_id", "key");

-- AddForeignKey
ALTER TABLE "idempotent_responses" ADD CONSTRAINT "idempotent_responses_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
