-- The SQLite twin of mysql/00003_action_columns.sql.

-- +goose Up
ALTER TABLE messages ADD COLUMN action_status TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN action_result_type TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN action_result_payload JSON NULL;

-- +goose Down
ALTER TABLE messages DROP COLUMN action_result_payload;
ALTER TABLE messages DROP COLUMN action_result_type;
ALTER TABLE messages DROP COLUMN action_status;
