-- Severity: the platform's SeverityLevelEnum (high, medium, low, none), which the inbox
-- client filters, counts (unreadCount.severity) and colours notifications by. A message
-- keeps its own (import takes it from the record, or else from its workflow's); a
-- workflow keeps one for its messages and the client's preferences. Empty, the default
-- (a row another writer inserted), is none.
--
-- The counters of migration 9 gain the severity in their state: a message's state is
-- its four bits (1 read, 2 seen, 4 archived, 8 snoozed) plus 16 times its severity's
-- level (0 none, or any value but these three; 1 low, 2 medium, 3 high), 64 states in
-- all. A count by severity is then a sum of counter rows like any other, one statement
-- for every combination of read, seen, archived, snoozed and severity, and the update
-- trigger moves a message's counts when its severity changes, whoever wrote it.
--
-- On Galera every statement here runs in total order on every node (TOI); writers should
-- be stopped while it runs, as for migrations 6 and 9 (docs/scaling.md has the recount).

-- +goose Up
ALTER TABLE messages ADD COLUMN severity VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN severity VARCHAR(64) NOT NULL DEFAULT '';

DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;

DELETE FROM message_counts;
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
          SELECT environment_id, '', '', (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*)
          FROM messages GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, '', channel, (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*)
          FROM messages WHERE channel <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, '', (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*)
          FROM messages WHERE subscriber_id <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, channel, (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 0, COUNT(*)
          FROM messages WHERE subscriber_id <> '' AND channel <> '' GROUP BY 1, 2, 3, 4;

-- +goose StatementBegin
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages FOR EACH ROW
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
    SELECT NEW.environment_id, '', '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END) AS state, CONNECTION_ID() % 16, 1
    UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, 1
        FROM DUAL WHERE NEW.channel <> ''
    UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, 1
        FROM DUAL WHERE NEW.subscriber_id <> ''
    UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, 1
        FROM DUAL WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
ON DUPLICATE KEY UPDATE n = n + 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages FOR EACH ROW
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
    SELECT OLD.environment_id, '', '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END) AS state, CONNECTION_ID() % 16, -1
    UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, -1
        FROM DUAL WHERE OLD.channel <> ''
    UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, -1
        FROM DUAL WHERE OLD.subscriber_id <> ''
    UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, -1
        FROM DUAL WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
ON DUPLICATE KEY UPDATE n = n - 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_update AFTER UPDATE ON messages FOR EACH ROW
BEGIN
    IF NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
        OR (NEW.`read` <> 0) <> (OLD.`read` <> 0) OR (NEW.seen <> 0) <> (OLD.seen <> 0)
        OR (NEW.archived <> 0) <> (OLD.archived <> 0) OR (NEW.snoozed_until IS NULL) <> (OLD.snoozed_until IS NULL)
        OR NEW.severity <> OLD.severity THEN
        INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
            SELECT OLD.environment_id, '', '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END) AS state, CONNECTION_ID() % 16, -1
            UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, -1
                FROM DUAL WHERE OLD.channel <> ''
            UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, -1
                FROM DUAL WHERE OLD.subscriber_id <> ''
            UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, -1
                FROM DUAL WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
        ON DUPLICATE KEY UPDATE n = n - 1;
        INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
            SELECT NEW.environment_id, '', '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END) AS state, CONNECTION_ID() % 16, 1
            UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, 1
                FROM DUAL WHERE NEW.channel <> ''
            UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, 1
                FROM DUAL WHERE NEW.subscriber_id <> ''
            UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), CONNECTION_ID() % 16, 1
                FROM DUAL WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
        ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;

-- Recounted without the severity, and the triggers of migration 9 again.
DELETE FROM message_counts;
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
          SELECT environment_id, '', '', (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*)
          FROM messages GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, '', channel, (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*)
          FROM messages WHERE channel <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, '', (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*)
          FROM messages WHERE subscriber_id <> '' GROUP BY 1, 2, 3, 4
UNION ALL SELECT environment_id, subscriber_id, channel, (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL), 0, COUNT(*)
          FROM messages WHERE subscriber_id <> '' AND channel <> '' GROUP BY 1, 2, 3, 4;

-- +goose StatementBegin
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages FOR EACH ROW
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
    SELECT NEW.environment_id, '', '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) AS state, CONNECTION_ID() % 16, 1
    UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, 1
        FROM DUAL WHERE NEW.channel <> ''
    UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, 1
        FROM DUAL WHERE NEW.subscriber_id <> ''
    UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, 1
        FROM DUAL WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
ON DUPLICATE KEY UPDATE n = n + 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages FOR EACH ROW
INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
    SELECT OLD.environment_id, '', '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) AS state, CONNECTION_ID() % 16, -1
    UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, -1
        FROM DUAL WHERE OLD.channel <> ''
    UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, -1
        FROM DUAL WHERE OLD.subscriber_id <> ''
    UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, -1
        FROM DUAL WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
ON DUPLICATE KEY UPDATE n = n - 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_update AFTER UPDATE ON messages FOR EACH ROW
BEGIN
    IF NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
        OR (NEW.`read` <> 0) <> (OLD.`read` <> 0) OR (NEW.seen <> 0) <> (OLD.seen <> 0)
        OR (NEW.archived <> 0) <> (OLD.archived <> 0) OR (NEW.snoozed_until IS NULL) <> (OLD.snoozed_until IS NULL) THEN
        INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
            SELECT OLD.environment_id, '', '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) AS state, CONNECTION_ID() % 16, -1
            UNION ALL SELECT OLD.environment_id, '', OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, -1
                FROM DUAL WHERE OLD.channel <> ''
            UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, -1
                FROM DUAL WHERE OLD.subscriber_id <> ''
            UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, -1
                FROM DUAL WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
        ON DUPLICATE KEY UPDATE n = n - 1;
        INSERT INTO message_counts (environment_id, subscriber_id, channel, state, shard, n)
            SELECT NEW.environment_id, '', '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) AS state, CONNECTION_ID() % 16, 1
            UNION ALL SELECT NEW.environment_id, '', NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, 1
                FROM DUAL WHERE NEW.channel <> ''
            UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, 1
                FROM DUAL WHERE NEW.subscriber_id <> ''
            UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL), CONNECTION_ID() % 16, 1
                FROM DUAL WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
        ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
END;
-- +goose StatementEnd

ALTER TABLE templates DROP COLUMN severity;
ALTER TABLE messages DROP COLUMN severity;
