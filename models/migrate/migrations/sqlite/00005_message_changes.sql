-- The SQLite twin of mysql/00005_message_changes.sql. SQLite has no ON UPDATE and cannot
-- add a column with a non-constant default, so triggers stamp the rows: text in one
-- fixed layout (UTC, milliseconds) that sorts as it reads. A writer may set changed_at
-- itself; the triggers only stamp a row whose writer did not.

-- +goose Up
ALTER TABLE messages ADD COLUMN inserted_at TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN changed_at TEXT NOT NULL DEFAULT '';
UPDATE messages SET inserted_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now');
CREATE INDEX messages_changed ON messages (changed_at, id);
CREATE INDEX messages_environment_changed ON messages (environment_id, changed_at, id);
CREATE INDEX messages_environment_subscriber_changed ON messages (environment_id, subscriber_id, changed_at, id);

-- +goose StatementBegin
CREATE TRIGGER messages_stamp_insert AFTER INSERT ON messages
WHEN NEW.changed_at = ''
BEGIN
    UPDATE messages
    SET inserted_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
    WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_stamp_update AFTER UPDATE ON messages
WHEN NEW.changed_at = OLD.changed_at
BEGIN
    UPDATE messages SET changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = NEW.id;
END;
-- +goose StatementEnd

CREATE TABLE change_holds (
    id         TEXT NOT NULL PRIMARY KEY,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    expires_at TEXT NOT NULL
);
CREATE INDEX change_holds_started ON change_holds (started_at);

-- +goose Down
DROP TABLE change_holds;
DROP TRIGGER messages_stamp_update;
DROP TRIGGER messages_stamp_insert;
DROP INDEX messages_environment_subscriber_changed;
DROP INDEX messages_environment_changed;
DROP INDEX messages_changed;
ALTER TABLE messages DROP COLUMN changed_at;
ALTER TABLE messages DROP COLUMN inserted_at;
