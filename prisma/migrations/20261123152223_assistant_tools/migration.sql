-- AlterTable
ALTER TABLE "conversations" ADD COLUMN     "handoff_started_at" TIMESTAMPTZ(3),
ADD COLUMN     "sla_breached_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "handoff_sla_minutes" INTEGER NOT NULL DEFAULT 15;

-- CreateTable
CREATE TABLE "csat_responses" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "score" SMALLINT NOT NULL,
    "comment" VARCHAR(1000),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "csat_responses_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_calls" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "tool" VARCHAR(64) NOT NULL,
    "tool_call_id" VARCHAR(255) NOT NULL,
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_calls_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "csat_responses_tenant_id_created_at_idx" ON "csat_responses"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "csat_responses_conversation_id_idx" ON "csat_responses"("conversation_id");

-- CreateIndex
CREATE INDEX "tool_calls_created_at_idx" ON "tool_calls"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "tool_calls_tenant_id_tool_tool_call_id_key" ON "tool_calls"("tenant_id", "tool", "tool_call_id");

-- CreateIndex
CREATE INDEX "conversations_status_handoff_started_at_idx" ON "conversations"("status", "handoff_started_at");

-- AddForeignKey
ALTER TABLE "csat_responses" ADD CONSTRAINT "csat_responses_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "csat_responses" ADD CONSTRAINT "csat_responses_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written (Prisma models neither expression indexes nor check constraints; its diff ignores both).
-- search_offerings: full text over the titles and descriptions. The query repeats this exact
-- expression (server/offerings/offerings.search.ts) so the planner uses the index. 'simple' lower-cases
-- and splits words without language stemming, which suits Arabic and English alike.
CREATE INDEX "offerings_search_idx" ON "offerings" USING GIN (
  to_tsvector('simple', coalesce("title", '') || ' ' || coalesce("title_ar", '') || ' ' || coalesce("description", '') || ' ' || coalesce("description_ar", ''))
);

ALTER TABLE "csat_responses" ADD CONSTRAINT "csat_responses_score_check" CHECK ("score" BETWEEN 1 AND 5);
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_handoff_sla_minutes_check" CHECK ("handoff_sla_minutes" BETWEEN 1 AND 10080);
