-- The initial schema, the SQLite twin of mysql/00001_initial.sql: same tables, columns
-- and indexes. Timestamps are stored as UTC text, which sorts in time order.

-- +goose Up
CREATE TABLE environments (
    id              TEXT     NOT NULL PRIMARY KEY,
    organization_id TEXT     NOT NULL,
    name            TEXT     NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL
);

CREATE TABLE api_keys (
    id             TEXT     NOT NULL PRIMARY KEY,
    environment_id TEXT     NOT NULL,
    name           TEXT     NOT NULL DEFAULT '',
    hash           TEXT     NOT NULL,
    hint           TEXT     NOT NULL,
    created_at     DATETIME NOT NULL,
    revoked_at     DATETIME NULL
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_environment ON api_keys (environment_id);

CREATE TABLE subscribers (
    id              TEXT     NOT NULL PRIMARY KEY,
    environment_id  TEXT     NOT NULL,
    organization_id TEXT     NOT NULL,
    subscriber_id   TEXT     NOT NULL,
    first_name      TEXT     NOT NULL DEFAULT '',
    last_name       TEXT     NOT NULL DEFAULT '',
    email           TEXT     NOT NULL DEFAULT '',
    phone           TEXT     NOT NULL DEFAULT '',
    avatar          TEXT     NOT NULL DEFAULT '',
    locale          TEXT     NOT NULL DEFAULT '',
    channels        JSON     NULL,
    topics          JSON     NULL,
    is_online       BOOLEAN  NULL,
    last_online_at  DATETIME NULL,
    v               INTEGER  NOT NULL DEFAULT 0,
    data            JSON     NULL,
    timezone        TEXT     NOT NULL DEFAULT '',
    deleted         BOOLEAN  NOT NULL DEFAULT FALSE,
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL
);
CREATE UNIQUE INDEX subscribers_environment_subscriber ON subscribers (environment_id, subscriber_id);

CREATE TABLE templates (
    id                          TEXT     NOT NULL PRIMARY KEY,
    environment_id              TEXT     NOT NULL,
    organization_id             TEXT     NOT NULL,
    name                        TEXT     NOT NULL DEFAULT '',
    description                 TEXT     NOT NULL DEFAULT '',
    active                      BOOLEAN  NOT NULL DEFAULT FALSE,
    draft                       BOOLEAN  NOT NULL DEFAULT FALSE,
    preference_settings         JSON     NULL,
    critical                    BOOLEAN  NOT NULL DEFAULT FALSE,
    tags                        JSON     NULL,
    steps                       JSON     NULL,
    creator_id                  TEXT     NOT NULL DEFAULT '',
    triggers                    JSON     NULL,
    notification_group_id       TEXT     NOT NULL DEFAULT '',
    parent_id                   TEXT     NOT NULL DEFAULT '',
    deleted                     BOOLEAN  NOT NULL DEFAULT FALSE,
    deleted_at                  DATETIME NULL,
    deleted_by                  TEXT     NOT NULL DEFAULT '',
    notification_group          JSON     NULL,
    data                        JSON     NULL,
    workflow_integration_status JSON     NULL
);
CREATE INDEX templates_environment ON templates (environment_id);

CREATE TABLE messages (
    id                  TEXT     NOT NULL PRIMARY KEY,
    environment_id      TEXT     NOT NULL,
    organization_id     TEXT     NOT NULL,
    template_id         TEXT     NOT NULL DEFAULT '',
    message_template_id TEXT     NOT NULL DEFAULT '',
    notification_id     TEXT     NOT NULL DEFAULT '',
    subscriber_id       TEXT     NOT NULL,
    template_identifier TEXT     NOT NULL DEFAULT '',
    created_at          DATETIME NOT NULL,
    delivered_at        JSON     NULL,
    last_seen_date      DATETIME NULL,
    last_read_date      DATETIME NULL,
    content             JSON     NULL,
    transaction_id      TEXT     NOT NULL,
    subject             TEXT     NOT NULL DEFAULT '',
    channel             TEXT     NOT NULL,
    read                BOOLEAN  NOT NULL DEFAULT FALSE,
    seen                BOOLEAN  NOT NULL DEFAULT FALSE,
    snoozed_until       DATETIME NULL,
    email               TEXT     NOT NULL DEFAULT '',
    phone               TEXT     NOT NULL DEFAULT '',
    direct_webhook_url  TEXT     NOT NULL DEFAULT '',
    provider_id         TEXT     NOT NULL DEFAULT '',
    device_tokens       JSON     NULL,
    title               TEXT     NOT NULL DEFAULT '',
    cta                 JSON     NOT NULL,
    feed_id             TEXT     NOT NULL DEFAULT '',
    status              TEXT     NOT NULL DEFAULT '',
    error_id            TEXT     NOT NULL DEFAULT '',
    error_text          TEXT     NOT NULL DEFAULT '',
    payload             JSON     NULL,
    overrides           JSON     NULL
);
CREATE INDEX messages_environment_created ON messages (environment_id, created_at, id);
CREATE INDEX messages_environment_channel_created ON messages (environment_id, channel, created_at, id);
CREATE INDEX messages_environment_subscriber_created ON messages (environment_id, subscriber_id, created_at, id);
CREATE INDEX messages_environment_subscriber_channel_created ON messages (environment_id, subscriber_id, channel, created_at, id);
CREATE INDEX messages_environment_transaction_created ON messages (environment_id, transaction_id, created_at, id);

-- +goose Down
DROP TABLE messages;
DROP TABLE templates;
DROP TABLE subscribers;
DROP TABLE api_keys;
DROP TABLE environments;
