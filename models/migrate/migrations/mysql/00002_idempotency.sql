-- Idempotency keys: the response of each request sent with an Idempotency-Key, written
-- in the same transaction as the change it made, so a change never exists without its
-- record or the reverse. The key is chosen by the client and compared exactly, so it is
-- VARBINARY like subscriber_id (1020 bytes hold 255 characters of any UTF-8). status is 0
-- only inside the transaction that claimed the key; a committed row always holds the
-- response. expires_at is indexed for the purge.

-- +goose Up
CREATE TABLE idempotency_keys (
    environment_id  CHAR(24)        NOT NULL,
    idempotency_key VARBINARY(1020) NOT NULL,
    fingerprint     CHAR(64)        NOT NULL,
    status          SMALLINT        NOT NULL DEFAULT 0,
    content_type    VARCHAR(255)    NOT NULL DEFAULT '',
    body            LONGBLOB        NULL,
    created_at      DATETIME(3)     NOT NULL,
    expires_at      DATETIME(3)     NOT NULL,
    PRIMARY KEY (environment_id, idempotency_key),
    KEY idempotency_keys_expires (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE idempotency_keys;
