-- The SQLite twin of mysql/00010_inbox_sessions.sql.

-- +goose Up
ALTER TABLE environments ADD COLUMN application_identifier TEXT NULL;
CREATE UNIQUE INDEX environments_application_identifier ON environments (application_identifier);
ALTER TABLE api_keys ADD COLUMN sealed BLOB NULL;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN sealed;
DROP INDEX environments_application_identifier;
ALTER TABLE environments DROP COLUMN application_identifier;
