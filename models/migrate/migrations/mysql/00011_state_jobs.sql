-- Bulk inbox state changes that outlast their request (models/store/statejobs.go): "mark
-- all read" over a subscriber's 100,000 messages takes longer than a request may, so the
-- change is kept here while it runs, in batches, each its own transaction that also
-- renews the job's lease and adds what it changed. The instance named by owner works on
-- it while lease_until is ahead of the database's clock; once it is past (the instance
-- stopped or lost the database), any instance claims the job and carries it on. A job
-- is deleted by the transaction of its last batch, so a row here is work not yet done.
--
-- spec is the change and the messages it applies to, as JSON (statejobs.go); changed is
-- how many messages its batches have changed so far. A subscriber's jobs run one at a
-- time, oldest first (state_jobs_subscriber); state_jobs_lease finds the claimable ones.

-- +goose Up
CREATE TABLE state_jobs (
    id             CHAR(24)        NOT NULL,
    environment_id CHAR(24)        NOT NULL,
    subscriber_id  VARBINARY(1020) NOT NULL,
    spec           TEXT            NOT NULL,
    changed        BIGINT          NOT NULL DEFAULT 0,
    attempts       INT             NOT NULL DEFAULT 0,
    owner          CHAR(24)        NOT NULL DEFAULT '',
    lease_until    TIMESTAMP(6)    NOT NULL DEFAULT '2000-01-01 00:00:00',
    created_at     TIMESTAMP(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    KEY state_jobs_subscriber (environment_id, subscriber_id, created_at, id),
    KEY state_jobs_lease (lease_until)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE state_jobs;
