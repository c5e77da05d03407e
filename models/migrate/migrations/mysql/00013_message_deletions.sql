-- Deleted messages leave a tombstone: the live event feed reads changes by the row's
-- changed_at (migration 5), and a deleted row has none left to read. A trigger AFTER
-- DELETE writes the message's id, where it was (environment, subscriber, channel, its
-- place in the lists: created_at) and when it went, whoever deleted it: this server, or another program's plain SQL DELETE.
-- The feed polls message_deletions beside messages (models/store/changes.go), so
-- subscriptions hear of a deletion and the inbox socket recounts; import skips what was
-- deleted after the file it reads was written (models/jsonl); and the inbox list's
-- `after`, a notification id, still pages on from a notification deleted since.
--
-- A tombstone is kept for the server's deletion retention (docs/scaling.md, "Deleted
-- messages"), then purged in batches. A message deleted twice (imported again, deleted
-- again) keeps one tombstone, of its latest deletion. The message counters need nothing
-- here: messages_count_delete (migrations 9 and 12) already takes a deleted row's counts back.

-- +goose Up
CREATE TABLE message_deletions (
    id             CHAR(24)     NOT NULL,
    environment_id CHAR(24)     NOT NULL,
    subscriber_id  CHAR(24)     NOT NULL,
    channel        VARCHAR(16)  NOT NULL,
    created_at     DATETIME(3)  NOT NULL,
    deleted_at     TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    KEY message_deletions_deleted (deleted_at, id),
    KEY message_deletions_environment (environment_id, deleted_at, id),
    KEY message_deletions_environment_subscriber (environment_id, subscriber_id, deleted_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose StatementBegin
CREATE TRIGGER messages_tombstone AFTER DELETE ON messages FOR EACH ROW
INSERT INTO message_deletions (id, environment_id, subscriber_id, channel, created_at, deleted_at)
    VALUES (OLD.id, OLD.environment_id, OLD.subscriber_id, OLD.channel, OLD.created_at, CURRENT_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE environment_id = VALUES(environment_id), subscriber_id = VALUES(subscriber_id),
    channel = VALUES(channel), created_at = VALUES(created_at), deleted_at = VALUES(deleted_at);
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_tombstone;
DROP TABLE message_deletions;
