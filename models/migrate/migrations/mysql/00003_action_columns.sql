-- The state a mark sets lives in its own columns, so marking a message is one plain
-- conditional UPDATE (no read-modify-write of the cta document, no JSON functions that
-- would reformat a stored payload). Empty or NULL means "never marked": the cta document
-- as delivered (or imported) still holds the action's original state.

-- +goose Up
ALTER TABLE messages
    ADD COLUMN action_status         VARCHAR(16) NOT NULL DEFAULT '',
    ADD COLUMN action_result_type    VARCHAR(16) NOT NULL DEFAULT '',
    ADD COLUMN action_result_payload LONGTEXT    NULL;

-- +goose Down
ALTER TABLE messages
    DROP COLUMN action_status,
    DROP COLUMN action_result_type,
    DROP COLUMN action_result_payload;
