-- AlterTable
ALTER TABLE "invitations" ADD COLUMN     "secret_hash" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "invitations_secret_hash_key" ON "invitations"("secret_hash");
