-- How a conversation's customer_identifier was stored: `normalized` (every row so far), or `as_sent`
-- for a provider-verified sender that is no phone number (short code, alphanumeric id; server/lib/sender-identifier.ts).
-- A constant default: PostgreSQL adds the column without rewriting the table.
-- AlterTable
ALTER TABLE "conversations" ADD COLUMN     "customer_identifier_kind" TEXT NOT NULL DEFAULT 'normalized';
