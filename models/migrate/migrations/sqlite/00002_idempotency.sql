-- Idempotency keys, the SQLite twin of mysql/00002_idempotency.sql: same columns and
-- indexes. TEXT compares byte for byte here, so the key needs no special type.

-- +goose Up
CREATE TABLE idempotency_keys (
    environment_id  TEXT     NOT NULL,
    idempotency_key TEXT     NOT NULL,
    fingerprint     TEXT     NOT NULL,
    status          INTEGER  NOT NULL DEFAULT 0,
    content_type    TEXT     NOT NULL DEFAULT '',
    body            BLOB     NULL,
    created_at      DATETIME NOT NULL,
    expires_at      DATETIME NOT NULL,
    PRIMARY KEY (environment_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
