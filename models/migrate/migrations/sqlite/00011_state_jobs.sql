-- The SQLite twin of mysql/00011_state_jobs.sql: same columns and indexes, times as text
-- in the layout of the database's clock (strftime, UTC, as change_holds).

-- +goose Up
CREATE TABLE state_jobs (
    id             TEXT    NOT NULL PRIMARY KEY,
    environment_id TEXT    NOT NULL,
    subscriber_id  TEXT    NOT NULL,
    spec           TEXT    NOT NULL,
    changed        INTEGER NOT NULL DEFAULT 0,
    attempts       INTEGER NOT NULL DEFAULT 0,
    owner          TEXT    NOT NULL DEFAULT '',
    lease_until    TEXT    NOT NULL DEFAULT '2000-01-01 00:00:00.000',
    created_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX state_jobs_subscriber ON state_jobs (environment_id, subscriber_id, created_at, id);
CREATE INDEX state_jobs_lease ON state_jobs (lease_until);

-- +goose Down
DROP TABLE state_jobs;
