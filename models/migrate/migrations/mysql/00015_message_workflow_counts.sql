-- Counts by workflow and month of creation, exact and without reading the messages: the
-- inbox client's counts by tags (the workflows that carry them) and by creation range
-- (createdGte, createdLte), alone or with a state, for one subscriber. message_workflow_counts
-- holds how many of a subscriber's messages of one channel, one workflow (template_id, ''
-- for none) and one calendar month of created_at (UTC, as the server writes it: 202501
-- for January 2025) are in each state (the states of migrations 9 and 12: four bits and
-- 16 times the severity's level). Triggers on messages keep it in the writing
-- transaction, beside message_counts, so every writer is counted (this server, `import`,
-- plain SQL) and a rolled-back write takes its count back.
--
-- A message adds 1 to one row, unlike message_counts' four: the rows are never summed
-- over subscribers (an environment's count by workflow or creation reads the rows), and
-- a count of all channels sums the subscriber's channels. A message with no subscriber
-- ('' from a plain-SQL writer) has no row: no subscriber's count matches it. Its channel
-- and workflow are kept as they are, '' included: '' here is a value, not "any".
--
-- A count by tags sums the rows of the tags' workflows; a count by creation sums the
-- months the range covers whole, and counts the rows of a month it covers in part from
-- the messages themselves, from the nearer end of that month
-- (models/store/countworkflows.go). So a range on month boundaries reads no message,
-- and any other reads at most half a month of the subscriber's messages of each partial
-- month: from the index alone, (environment, subscriber, channel, created_at, id), which
-- now also holds what such a count tests (the workflow and the state's columns), so a
-- message of a partial month costs one index entry, not a lookup of its row. The index
-- keeps its name and its first columns, so the lists that read it are unchanged; a
-- state change now writes it, as it writes messages_inbox.
--
-- Shards as in message_counts (migration 6): the row a transaction adds to is picked by
-- CONNECTION_ID() % 16, so transactions on different connections rarely wait for each
-- other's rows, and a count sums the shards. The environment leads the primary key (a
-- sharded engine's shard key), the shard next, so each shard of an environment is a key
-- range of its own and writers on different shards do not insert into each other's gaps.
--
-- The update trigger is apart from messages_count_update (a table has several triggers
-- per event since MariaDB 10.2.3 and MySQL 5.7.2) and, as it, tests in its body whether
-- a counted value changed: a mark of the call-to-action or a change stamp writes nothing.
--
-- As for migrations 6, 9 and 12, writers should be stopped while it runs: a message
-- written between the backfill below and the triggers' creation is counted by neither
-- (docs/scaling.md has the recount).

-- +goose Up
ALTER TABLE messages
    DROP KEY messages_environment_subscriber_channel_created,
    ADD KEY messages_environment_subscriber_channel_created
        (environment_id, subscriber_id, channel, created_at, id, template_id, `read`, seen, archived, snoozed_until, severity);

CREATE TABLE message_workflow_counts (
    environment_id CHAR(24)    NOT NULL,
    shard          SMALLINT    NOT NULL,
    subscriber_id  CHAR(24)    NOT NULL,
    channel        VARCHAR(16) NOT NULL,
    template_id    VARCHAR(24) NOT NULL,
    created_month  INT         NOT NULL,
    state          TINYINT     NOT NULL,
    n              BIGINT      NOT NULL,
    PRIMARY KEY (environment_id, shard, subscriber_id, channel, template_id, created_month, state)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The messages already stored, counted on shard 0.
INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
    SELECT environment_id, 0, subscriber_id, channel, template_id, EXTRACT(YEAR_MONTH FROM created_at),
        (`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL) + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), COUNT(*)
    FROM messages WHERE subscriber_id <> '' GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- +goose StatementBegin
CREATE TRIGGER messages_workflow_count_insert AFTER INSERT ON messages FOR EACH ROW
INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
    SELECT NEW.environment_id, CONNECTION_ID() % 16, NEW.subscriber_id, NEW.channel, NEW.template_id, EXTRACT(YEAR_MONTH FROM NEW.created_at),
        (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 1
    FROM DUAL WHERE NEW.subscriber_id <> ''
ON DUPLICATE KEY UPDATE n = n + 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_workflow_count_delete AFTER DELETE ON messages FOR EACH ROW
INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
    SELECT OLD.environment_id, CONNECTION_ID() % 16, OLD.subscriber_id, OLD.channel, OLD.template_id, EXTRACT(YEAR_MONTH FROM OLD.created_at),
        (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), -1
    FROM DUAL WHERE OLD.subscriber_id <> ''
ON DUPLICATE KEY UPDATE n = n - 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_workflow_count_update AFTER UPDATE ON messages FOR EACH ROW
BEGIN
    IF NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel
        OR NEW.template_id <> OLD.template_id OR EXTRACT(YEAR_MONTH FROM NEW.created_at) <> EXTRACT(YEAR_MONTH FROM OLD.created_at)
        OR (NEW.`read` <> 0) <> (OLD.`read` <> 0) OR (NEW.seen <> 0) <> (OLD.seen <> 0)
        OR (NEW.archived <> 0) <> (OLD.archived <> 0) OR (NEW.snoozed_until IS NULL) <> (OLD.snoozed_until IS NULL)
        OR NEW.severity <> OLD.severity THEN
        INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
            SELECT OLD.environment_id, CONNECTION_ID() % 16, OLD.subscriber_id, OLD.channel, OLD.template_id, EXTRACT(YEAR_MONTH FROM OLD.created_at),
                (OLD.`read` <> 0) + 2 * (OLD.seen <> 0) + 4 * (OLD.archived <> 0) + 8 * (OLD.snoozed_until IS NOT NULL) + 16 * (CASE OLD.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), -1
            FROM DUAL WHERE OLD.subscriber_id <> ''
        ON DUPLICATE KEY UPDATE n = n - 1;
        INSERT INTO message_workflow_counts (environment_id, shard, subscriber_id, channel, template_id, created_month, state, n)
            SELECT NEW.environment_id, CONNECTION_ID() % 16, NEW.subscriber_id, NEW.channel, NEW.template_id, EXTRACT(YEAR_MONTH FROM NEW.created_at),
                (NEW.`read` <> 0) + 2 * (NEW.seen <> 0) + 4 * (NEW.archived <> 0) + 8 * (NEW.snoozed_until IS NOT NULL) + 16 * (CASE NEW.severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END), 1
            FROM DUAL WHERE NEW.subscriber_id <> ''
        ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_workflow_count_update;
DROP TRIGGER messages_workflow_count_delete;
DROP TRIGGER messages_workflow_count_insert;
DROP TABLE message_workflow_counts;
ALTER TABLE messages
    DROP KEY messages_environment_subscriber_channel_created,
    ADD KEY messages_environment_subscriber_channel_created (environment_id, subscriber_id, channel, created_at, id);
