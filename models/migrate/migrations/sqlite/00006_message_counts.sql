-- The SQLite twin of mysql/00006_message_counts.sql: the same counter rows, kept by
-- triggers in the writing transaction. SQLite has one writer at a time, so there is no
-- hot row to spread and every count lands on shard 0; the key is the same as MySQL's. The update trigger's WHEN skips
-- the updates that do not move a message (a mark, the change stamps of 00005).

-- +goose Up
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

-- +goose Down
DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;
DROP TABLE message_counts;
