-- +goose Up
-- The labour part of a provider's price, in whole percent (0-100) of the
-- amount an option shows; NULL when the provider has not stated it, which
-- means no ROT/RUT estimate is made for the price.
ALTER TABLE provider_services ADD COLUMN labour_percent INTEGER CHECK (labour_percent BETWEEN 0 AND 100);
-- The preliminary ROT/RUT estimate a booking keeps from its confirmation or
-- latest reschedule, so that a later change of the rules does not change
-- it. tax_reduction_kind '' means the booking has no estimate (and the
-- other columns are 0 or ''). The booked price stays price_sek.
ALTER TABLE bookings ADD COLUMN tax_reduction_kind TEXT NOT NULL DEFAULT '' CHECK (tax_reduction_kind IN ('', 'rot', 'rut'));
ALTER TABLE bookings ADD COLUMN tax_reduction_rate_percent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bookings ADD COLUMN labour_percent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bookings ADD COLUMN labour_sek BIGINT NOT NULL DEFAULT 0;
ALTER TABLE bookings ADD COLUMN tax_reduction_sek BIGINT NOT NULL DEFAULT 0;
ALTER TABLE bookings ADD COLUMN tax_rules_version TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE bookings DROP COLUMN tax_rules_version;
ALTER TABLE bookings DROP COLUMN tax_reduction_sek;
ALTER TABLE bookings DROP COLUMN labour_sek;
ALTER TABLE bookings DROP COLUMN labour_percent;
ALTER TABLE bookings DROP COLUMN tax_reduction_rate_percent;
ALTER TABLE bookings DROP COLUMN tax_reduction_kind;
ALTER TABLE provider_services DROP COLUMN labour_percent;
