-- The SQLite twin of mysql/00012_message_severity.sql: a severity per message and per
-- workflow, and the counters kept per state with the severity's level above the four
-- bits (16 * level: 0 none or unknown, 1 low, 2 medium, 3 high).

-- +goose Up
ALTER TABLE messages ADD COLUMN severity TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN severity TEXT NOT NULL DEFAULT '';

DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;

DELETE FROM message_counts;
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
          SELECT environment_id, '', '', ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*) FROM messages GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, '', channel, ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*) FROM messages WHERE channel <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, '', ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*) FROM messages WHERE subscriber_id <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, channel, ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*) FROM messages
          WHERE subscriber_id <> '' AND channel <> '' GROUP BY 1, 2, 3, 4;

-- +goose StatementBegin
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT NEW.environment_id, '', '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1
        UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1 WHERE NEW.channel <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1 WHERE NEW.subscriber_id <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1 WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT OLD.environment_id, '', '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1
        UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1 WHERE OLD.channel <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1 WHERE OLD.subscriber_id <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1 WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n - 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_update AFTER UPDATE OF environment_id, subscriber_id, channel, "read", seen, archived, snoozed_until, severity ON messages
WHEN NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
    OR (NEW."read" <> 0) <> (OLD."read" <> 0) OR (NEW.seen <> 0) <> (OLD.seen <> 0)
    OR (NEW.archived <> 0) <> (OLD.archived <> 0) OR (NEW.snoozed_until IS NULL) <> (OLD.snoozed_until IS NULL)
    OR NEW.severity <> OLD.severity
BEGIN
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT OLD.environment_id, '', '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1
        UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1 WHERE OLD.channel <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1 WHERE OLD.subscriber_id <> ''
        UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, -1 WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n - 1;
    INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
        SELECT NEW.environment_id, '', '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1
        UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1 WHERE NEW.channel <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1 WHERE NEW.subscriber_id <> ''
        UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, 1 WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
    ON CONFLICT (shard, environment_id, subscriber_id, channel, state) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;

DELETE FROM message_counts;
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

ALTER TABLE templates DROP COLUMN severity;
ALTER TABLE messages DROP COLUMN severity;
