-- templates.deletedAt is a plain string in the contract and in the platform's records
-- ("" when the workflow was never deleted), not a timestamp: keep it as text, byte for
-- byte. Timestamps already stored keep their instant, in the wire form
-- (2025-03-01T10:00:00.000Z).

-- +goose Up
ALTER TABLE templates MODIFY deleted_at TEXT NULL;
UPDATE templates SET deleted_at = CONCAT(REPLACE(deleted_at, ' ', 'T'), 'Z') WHERE deleted_at IS NOT NULL;

-- +goose Down
-- Text that is not a timestamp has no DATETIME form and is lost.
UPDATE templates SET deleted_at = NULL
    WHERE deleted_at NOT REGEXP '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?Z$';
UPDATE templates SET deleted_at = REPLACE(REPLACE(deleted_at, 'T', ' '), 'Z', '') WHERE deleted_at IS NOT NULL;
ALTER TABLE templates MODIFY deleted_at DATETIME(3) NULL;
