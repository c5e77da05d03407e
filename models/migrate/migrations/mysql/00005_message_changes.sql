-- When each message row was inserted and last changed, kept by the database itself so
-- that every writer is seen: this server, `import` in another process, and the
-- platform's own workers inserting rows with plain SQL. The live event feed polls
-- messages_changed once per interval per instance (docs/scaling.md, "Live events").
-- TIMESTAMP, not DATETIME: it is stored in UTC whatever a writer's session time zone, so
-- positions from different writers compare as instants. ON UPDATE fires only when a
-- column's value actually changes, so a repeated identical mark is no event.
-- The two (environment_id, ..., changed_at, id) indexes serve a subscription resuming
-- from a cursor; messages_changed is the one index that does not start with the
-- environment, because the poll reads every tenant's changes at once.

-- +goose Up
ALTER TABLE messages
    ADD COLUMN inserted_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    ADD COLUMN changed_at  TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    ADD KEY messages_changed (changed_at, id),
    ADD KEY messages_environment_changed (environment_id, changed_at, id),
    ADD KEY messages_environment_subscriber_changed (environment_id, subscriber_id, changed_at, id);

-- A writer that keeps a transaction open longer than the feed's lookback window (import
-- does) registers here first, so the feed does not move past rows it has not committed.
CREATE TABLE change_holds (
    id         CHAR(24)     NOT NULL,
    started_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    expires_at TIMESTAMP(6) NOT NULL,
    PRIMARY KEY (id),
    KEY change_holds_started (started_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE change_holds;
ALTER TABLE messages
    DROP KEY messages_environment_subscriber_changed,
    DROP KEY messages_environment_changed,
    DROP KEY messages_changed,
    DROP COLUMN changed_at,
    DROP COLUMN inserted_at;
