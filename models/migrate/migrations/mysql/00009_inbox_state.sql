-- The inbox state of a message: read and seen (columns since migration 1), archived and
-- snoozed, each with its time, and counts by that state, exact and in constant time.
--
-- A message's state is four bits: 1 read, 2 seen, 4 archived, 8 snoozed (snoozed_until
-- set). message_counts gains the state in its key, so each counter of migration 6 (an
-- environment's messages per subscriber, per channel, per both, '' meaning any) is now
-- kept per state: a message adds 1 to the four rows of its state, and any count by read,
-- seen, archived and snoozed, or by none of them, sums the shards' rows of the states it
-- matches. One statement reads the 16 states of one counter (16 key ranges of at most 16
-- rows), from which every combination of those filters is answered.
--
-- The update trigger now also moves a message's counts when its state changes: a
-- message marked read leaves the unread state's four rows and joins the read state's,
-- in the same transaction, whoever wrote it (this server, `import`, plain SQL).
--
-- On Galera every statement here runs in total order on every node (TOI); writers should
-- be stopped while it runs, as for migration 6: a message written between the recount
-- below and the new triggers is counted by neither (docs/scaling.md has the recount).

-- +goose Up
ALTER TABLE messages
    ADD COLUMN archived        BOOLEAN     NOT NULL DEFAULT FALSE,
    ADD COLUMN archived_at     DATETIME(3) NULL,
    ADD COLUMN first_seen_date DATETIME(3) NULL,
    -- A subscriber's inbox tab: their messages of one channel, archived or not, newest
    -- first; read and seen are in the index so an unread tab skips read messages without
    -- reading their rows.
    ADD KEY messages_inbox (environment_id, subscriber_id, channel, archived, created_at, id, `read`, seen),
    -- Snoozes that ended, for the sweep that wakes them (models/store/inbox.go).
    ADD KEY messages_snoozed_until (snoozed_until);

DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;

ALTER TABLE message_counts
    ADD COLUMN state TINYINT NOT NULL DEFAULT 0,
    DROP PRIMARY KEY,
    ADD PRIMARY KEY (shard, environment_id, subscriber_id, channel, state);

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

-- A mark of the call-to-action, or a change stamp, changes none of the counted values, so
-- the body tests first (MySQL triggers have no WHEN clause).
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

-- +goose Down
DROP TRIGGER messages_count_update;
DROP TRIGGER messages_count_delete;
DROP TRIGGER messages_count_insert;
DELETE FROM message_counts;
ALTER TABLE message_counts DROP PRIMARY KEY, DROP COLUMN state, ADD PRIMARY KEY (shard, environment_id, subscriber_id, channel);
-- Recounted without the state, and the triggers of migration 6 again.
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
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages FOR EACH ROW
INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
    SELECT NEW.environment_id, '', '', CONNECTION_ID() % 16, 1
    UNION ALL SELECT NEW.environment_id, '', NEW.channel, CONNECTION_ID() % 16, 1 FROM DUAL WHERE NEW.channel <> ''
    UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', CONNECTION_ID() % 16, 1 FROM DUAL WHERE NEW.subscriber_id <> ''
    UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, CONNECTION_ID() % 16, 1 FROM DUAL
        WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
ON DUPLICATE KEY UPDATE n = n + 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages FOR EACH ROW
INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
    SELECT OLD.environment_id, '', '', CONNECTION_ID() % 16, -1
    UNION ALL SELECT OLD.environment_id, '', OLD.channel, CONNECTION_ID() % 16, -1 FROM DUAL WHERE OLD.channel <> ''
    UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', CONNECTION_ID() % 16, -1 FROM DUAL WHERE OLD.subscriber_id <> ''
    UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, CONNECTION_ID() % 16, -1 FROM DUAL
        WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
ON DUPLICATE KEY UPDATE n = n - 1;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_count_update AFTER UPDATE ON messages FOR EACH ROW
BEGIN
    IF NEW.environment_id <> OLD.environment_id OR NEW.subscriber_id <> OLD.subscriber_id OR NEW.channel <> OLD.channel THEN
        INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
            SELECT OLD.environment_id, '', '', CONNECTION_ID() % 16, -1
            UNION ALL SELECT OLD.environment_id, '', OLD.channel, CONNECTION_ID() % 16, -1 FROM DUAL WHERE OLD.channel <> ''
            UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, '', CONNECTION_ID() % 16, -1 FROM DUAL WHERE OLD.subscriber_id <> ''
            UNION ALL SELECT OLD.environment_id, OLD.subscriber_id, OLD.channel, CONNECTION_ID() % 16, -1 FROM DUAL
                WHERE OLD.subscriber_id <> '' AND OLD.channel <> ''
        ON DUPLICATE KEY UPDATE n = n - 1;
        INSERT INTO message_counts (environment_id, subscriber_id, channel, shard, n)
            SELECT NEW.environment_id, '', '', CONNECTION_ID() % 16, 1
            UNION ALL SELECT NEW.environment_id, '', NEW.channel, CONNECTION_ID() % 16, 1 FROM DUAL WHERE NEW.channel <> ''
            UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, '', CONNECTION_ID() % 16, 1 FROM DUAL WHERE NEW.subscriber_id <> ''
            UNION ALL SELECT NEW.environment_id, NEW.subscriber_id, NEW.channel, CONNECTION_ID() % 16, 1 FROM DUAL
                WHERE NEW.subscriber_id <> '' AND NEW.channel <> ''
        ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
END;
-- +goose StatementEnd

ALTER TABLE messages
    DROP KEY messages_snoozed_until,
    DROP KEY messages_inbox,
    DROP COLUMN first_seen_date,
    DROP COLUMN archived_at,
    DROP COLUMN archived;
