-- The SQLite twin of mysql/00009_inbox_state.sql: archived and snoozed beside read and
-- seen, and the counters kept per state (1 read, 2 seen, 4 archived, 8 snoozed). SQLite
-- cannot change a primary key in place, so message_counts is made again and recounted.

-- +goose Up
ALTER TABLE messages ADD COLUMN archived BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE messages ADD COLUMN archived_at DATETIME NULL;
ALTER TABLE messages ADD COLUMN first_seen_date DATETIME NULL;
CREATE INDEX messages_inbox ON messages (environment_id, subscriber_id, channel, archived, created_at, id, "read", seen);
CREATE INDEX messages_snoozed_until ON messages (snoozed_until);

DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;
DROP TABLE message_counts;
CREATE TABLE message_counts (
    environment_id TEXT    NOT NULL,
    subscriber_id  TEXT    NOT NULL,
    channel        TEXT    NOT NULL,
    state          INTEGER NOT NULL,
    shard          INTEGER NOT NULL,
    n              INTEGER NOT NULL,
    PRIMARY KEY (shard, environment_id, subscriber_id, channel, state)
);

INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
          SELECT environment_id, '', '', ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*) FROM messages GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, '', channel, ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*) FROM messages WHERE channel <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, '', ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*) FROM messages WHERE subscriber_id <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, channel, ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*) FROM messages
          WHERE subscriber_id <> '' AND channel <> '' GROUP BY 1, 2, 3, 4;

-- +goose StatementBegin
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT NEW.environment_id, '', '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1
        UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1 WHERE NEW.channel <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1 WHERE NEW.subscriber_id <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1 WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT OLD.environment_id, '', '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1
        UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1 WHERE OLD.channel <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1 WHERE OLD.subscriber_id <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1 WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n - 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_update AFTER UPDATE OF environment_id, subscriber_id, channel, "read", seen, archived, snoozed_until ON messages
WHEN NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
    OR (NEW."read" <> 0) <> (OLD."read" <> 0) OR (NEW.seen <> 0) <> (OLD.seen <> 0)
    OR (NEW.archived <> 0) <> (OLD.archived <> 0) OR (NEW.snoozed_until IS NULL) <> (OLD.snoozed_until IS NULL)
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT OLD.environment_id, '', '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1
        UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1 WHERE OLD.channel <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1 WHERE OLD.subscriber_id <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), 0, -1 WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n - 1;
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT NEW.environment_id, '', '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1
        UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1 WHERE NEW.channel <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1 WHERE NEW.subscriber_id <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), 0, 1 WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;
DROP TABLE message_counts;
CREATE TABLE message_counts (
    environment_id TEXT    NOT NULL,
    subscriber_id  TEXT    NOT NULL,
    channel        TEXT    NOT NULL,
    shard          INTEGER NOT NULL,
    n              INTEGER NOT NULL,
    PRIMARY KEY (shard, environment_id, subscriber_id, channel)
);
INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
    SELECT environment_id, '', '', 0, COUNT(*) FROM messages GROUP BY environment_id;
INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
    SELECT environment_id, '', channel, 0, COUNT(*) FROM messages WHERE channel <> '' GROUP BY environment_id, channel;
INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
    SELECT environment_id, subscriber_id, '', 0, COUNT(*) FROM messages WHERE subscriber_id <> '' GROUP BY environment_id, subscriber_id;
INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
    SELECT environment_id, subscriber_id, channel, 0, COUNT(*) FROM messages
    WHERE subscriber_id <> '' AND channel <> '' GROUP BY environment_id, subscriber_id, channel;

-- +goose StatementBegin
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
        SELECT NEW.environment_id, '', '', 0, 1
        UNION ALL SELECT NEW.environment_id, '', NEW.channel, 0, 1 WHERE NEW.channel <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', 0, 1 WHERE NEW.subscriber_id <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, 0, 1 WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
        SELECT OLD.environment_id, '', '', 0, -1
        UNION ALL SELECT OLD.environment_id, '', OLD.channel, 0, -1 WHERE OLD.channel <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', 0, -1 WHERE OLD.subscriber_id <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, 0, -1 WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel) DO UPDATE SET n = n - 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_update AFTER UPDATE OF environment_id, subscriber_id, channel ON messages
WHEN NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
        SELECT OLD.environment_id, '', '', 0, -1
        UNION ALL SELECT OLD.environment_id, '', OLD.channel, 0, -1 WHERE OLD.channel <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', 0, -1 WHERE OLD.subscriber_id <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, 0, -1 WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel) DO UPDATE SET n = n - 1;
    INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
        SELECT NEW.environment_id, '', '', 0, 1
        UNION ALL SELECT NEW.environment_id, '', NEW.channel, 0, 1 WHERE NEW.channel <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', 0, 1 WHERE NEW.subscriber_id <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, 0, 1 WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

DROP INDEX messages_snoozed_until;
DROP INDEX messages_inbox;
ALTER TABLE messages DROP COLUMN first_seen_date;
ALTER TABLE messages DROP COLUMN archived_at;
ALTER TABLE messages DROP COLUMN archived;
