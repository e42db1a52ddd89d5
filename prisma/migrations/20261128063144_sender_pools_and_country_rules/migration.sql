-- CreateEnum
CREATE TYPE "AlphanumericSenderRule" AS ENUM ('allowed', 'replaced', 'refused', 'required');

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "sender" TEXT;

-- CreateTable
CREATE TABLE "recipient_senders" (
    "account_id" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "last_used_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "recipient_senders_pkey" PRIMARY KEY ("account_id","recipient")
);

-- CreateTable
CREATE TABLE "country_sender_rules" (
    "country" TEXT NOT NULL,
    "alphanumeric" "AlphanumericSenderRule" NOT NULL,
    "numeric_replaced" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "country_sender_rules_pkey" PRIMARY KEY ("country")
);

-- CreateIndex
CREATE INDEX "recipient_senders_last_used_at_idx" ON "recipient_senders"("last_used_at");

-- AddForeignKey
ALTER TABLE "recipient_senders" ADD CONSTRAINT "recipient_senders_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The shipped country sender rules, after the country lists of public SMS providers (Twilio's
-- alphanumeric sender ID support, AWS End User Messaging's supported countries) as of 2026-11.
-- Alphanumeric senders do not reach these countries: the networks take numbers only.
INSERT INTO "country_sender_rules" ("country", "alphanumeric") VALUES
  ('US', 'refused'), ('CA', 'refused'), ('PR', 'refused'), ('GU', 'refused'), ('VI', 'refused'),
  ('CN', 'refused');
-- Alphanumeric senders reach these, but the networks replace them (by a short code or a number
-- of their own): a pool gives a number there when it has one.
INSERT INTO "country_sender_rules" ("country", "alphanumeric") VALUES
  ('AR', 'replaced'), ('BR', 'replaced'), ('CL', 'replaced'), ('CO', 'replaced'), ('CR', 'replaced'),
  ('DO', 'replaced'), ('EC', 'replaced'), ('PE', 'replaced'), ('UY', 'replaced'), ('VE', 'replaced');
-- Numeric senders are refused: a registered alphanumeric one is needed.
INSERT INTO "country_sender_rules" ("country", "alphanumeric") VALUES
  ('AE', 'required'), ('SA', 'required');
-- Both reach, but the networks replace a numeric sender by one of their own: a pool gives a name
-- there when it has one.
INSERT INTO "country_sender_rules" ("country", "alphanumeric", "numeric_replaced") VALUES
  ('AO', 'allowed', true), ('IN', 'allowed', true), ('FR', 'allowed', true);
