-- The SQLite twin of mysql/00015_message_workflow_counts.sql: a subscriber's counts by
-- channel, workflow, month of creation and state, kept by triggers. One writer, so one
-- shard (0). created_at is stored as text, 2025-01-31 23:59:59.999+00:00 (UTC, as the
-- server writes it), so its month is the first seven characters without the dash. The
-- index of a subscriber's channel holds the workflow and the state's columns, as on
-- MySQL.

-- +goose Up
DROP INDEX messages_environment_subscriber_channel_created;
CREATE INDEX messages_environment_subscriber_channel_created ON messages
    (environment_id, subscriber_id, channel, created_at, id, template_id, "read", seen, archived, snoozed_until, severity);

CREATE TABLE message_workflow_counts (
    environment_id TEXT    NOT NULL,
    shard          INTEGER NOT NULL,
    subscriber_id  TEXT    NOT NULL,
    channel        TEXT    NOT NULL,
    template_id    TEXT    NOT NULL,
    created_month  INTEGER NOT NULL,
    state          INTEGER NOT NULL,
    n              INTEGER NOT NULL,
    PRIMARY KEY (environment_id, shard, subscriber_id, channel, template_id, created_month, state)
);

INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
    SELECT environment_id, 0, subscriber_id, channel, template_id, CAST(substr(created_at, 1, 4) || substr(created_at, 6, 2) AS INTEGER),
        ("read" <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), COUNT(*)
    FROM messages WHERE subscriber_id <> '' GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- +goose StatementBegin
CREATE TRIGGER messages_workflow_count_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
        SELECT NEW.environment_id, 0, NEW.subscriber_id, NEW.channel, NEW.template_id, CAST(substr(NEW.created_at, 1, 4) || substr(NEW.created_at, 6, 2) AS INTEGER),
            (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 1
        WHERE NEW.subscriber_id <> ''
    ON CONFLICT (environment_id, shard, subscriber_id, channel, template_id, created_month, state) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_workflow_count_delete AFTER DELETE ON messages
BEGIN
    INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
        SELECT OLD.environment_id, 0, OLD.subscriber_id, OLD.channel, OLD.template_id, CAST(substr(OLD.created_at, 1, 4) || substr(OLD.created_at, 6, 2) AS INTEGER),
            (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), -1
        WHERE OLD.subscriber_id <> ''
    ON CONFLICT (environment_id, shard, subscriber_id, channel, template_id, created_month, state) DO UPDATE SET n = n - 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_workflow_count_update AFTER UPDATE OF environment_id, subscriber_id, channel, template_id, created_at, "read", seen, archived, snoozed_until, severity ON messages
WHEN NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
    OR NEW.template_id <> OLD.template_id OR CAST(substr(NEW.created_at, 1, 4) || substr(NEW.created_at, 6, 2) AS INTEGER) <> CAST(substr(OLD.created_at, 1, 4) || substr(OLD.created_at, 6, 2) AS INTEGER)
    OR (NEW."read" <> 0) <> (OLD."read" <> 0) OR (NEW.seen <> 0) <> (OLD.seen <> 0)
    OR (NEW.archived <> 0) <> (OLD.archived <> 0) OR (NEW.snoozed_until IS NULL) <> (OLD.snoozed_until IS NULL)
    OR NEW.severity <> OLD.severity
BEGIN
    INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
        SELECT OLD.environment_id, 0, OLD.subscriber_id, OLD.channel, OLD.template_id, CAST(substr(OLD.created_at, 1, 4) || substr(OLD.created_at, 6, 2) AS INTEGER),
            (OLD."read" <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), -1
        WHERE OLD.subscriber_id <> ''
    ON CONFLICT (environment_id, shard, subscriber_id, channel, template_id, created_month, state) DO UPDATE SET n = n - 1;
    INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
        SELECT NEW.environment_id, 0, NEW.subscriber_id, NEW.channel, NEW.template_id, CAST(substr(NEW.created_at, 1, 4) || substr(NEW.created_at, 6, 2) AS INTEGER),
            (NEW."read" <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 1
        WHERE NEW.subscriber_id <> ''
    ON CONFLICT (environment_id, shard, subscriber_id, channel, template_id, created_month, state) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_workflow_count_update;
DROP TRIGGER messages_workflow_count_delete;
DROP TRIGGER messages_workflow_count_insert;
DROP TABLE message_workflow_counts;
DROP INDEX messages_environment_subscriber_channel_created;
CREATE INDEX messages_environment_subscriber_channel_created ON messages (environment_id, subscriber_id, channel, created_at, id);
