-- The SQLite twin of mysql/00004_template_deleted_at_text.sql. SQLite cannot change a
-- column's type in place, so the column is rebuilt; the driver reads a DATETIME column
-- as a time, so text must live in a TEXT column.

-- +goose Up
ALTER TABLE templates ADD COLUMN deleted_at_text TEXT NULL;
UPDATE templates SET deleted_at_text = strftime('%Y-%m-%dT%H:%M:%fZ', deleted_at) WHERE deleted_at IS NOT NULL;
ALTER TABLE templates DROP COLUMN deleted_at;
ALTER TABLE templates RENAME COLUMN deleted_at_text TO deleted_at;

-- +goose Down
-- Text that is not a timestamp has no DATETIME form and is lost (strftime gives NULL).
ALTER TABLE templates ADD COLUMN deleted_at_time DATETIME NULL;
UPDATE templates SET deleted_at_time = strftime('%Y-%m-%d %H:%M:%f+00:00', deleted_at) WHERE deleted_at IS NOT NULL;
ALTER TABLE templates DROP COLUMN deleted_at;
ALTER TABLE templates RENAME COLUMN deleted_at_time TO deleted_at;
