-- Rows whose url still holds a secret option (a vonage:// carrier's signature_secret) are sealed
-- into this column at the next start (CarrierCatalog.sealSecretOptionsLeftInUrls): sealing takes
-- the key, which SQL has not.
-- AlterTable
ALTER TABLE "carriers" ADD COLUMN     "secret_options_sealed" TEXT;
