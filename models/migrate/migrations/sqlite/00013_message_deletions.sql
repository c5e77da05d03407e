-- Deleted messages leave a tombstone for the live event feed and import (the MySQL
-- migration of the same number says why). Stamps are text in the layout of migration 5.

-- +goose Up
CREATE TABLE message_deletions (
    id             TEXT NOT NULL PRIMARY KEY,
    environment_id TEXT NOT NULL,
    subscriber_id  TEXT NOT NULL,
    channel        TEXT NOT NULL,
    created_at     DATETIME NOT NULL,
    deleted_at     TEXT NOT NULL
);
CREATE INDEX message_deletions_deleted ON message_deletions (deleted_at, id);
CREATE INDEX message_deletions_environment ON message_deletions (environment_id, deleted_at, id);
CREATE INDEX message_deletions_environment_subscriber ON message_deletions (environment_id, subscriber_id, deleted_at, id);

-- +goose StatementBegin
CREATE TRIGGER messages_tombstone AFTER DELETE ON messages
BEGIN
    INSERT INTO message_deletions (id, environment_id, subscriber_id, channel, created_at, deleted_at)
        VALUES (OLD.id, OLD.environment_id, OLD.subscriber_id, OLD.channel, OLD.created_at, strftime('%Y-%m-%d %H:%M:%f', 'now'))
    ON CONFLICT (id) DO UPDATE SET environment_id = excluded.environment_id, subscriber_id = excluded.subscriber_id,
        channel = excluded.channel, created_at = excluded.created_at, deleted_at = excluded.deleted_at;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_tombstone;
DROP TABLE message_deletions;
