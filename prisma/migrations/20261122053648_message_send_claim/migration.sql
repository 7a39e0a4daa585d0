-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "send_claimed_until" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "messages_send_claimed_until_idx" ON "messages"("send_claimed_until");
