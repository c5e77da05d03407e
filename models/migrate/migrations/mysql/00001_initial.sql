-- The initial schema. Tables use utf8mb4_bin so text compares case-sensitively, as on
-- SQLite. The two caller-chosen identifiers that are filtered on (subscriber_id and
-- transaction_id) are VARBINARY: utf8mb4_bin still ignores trailing spaces ("a" = "a "),
-- and no collation with exact comparison exists on both MariaDB and MySQL 8. 1020 bytes
-- hold 255 characters of any UTF-8. Structured and free-form values are JSON text in
-- LONGTEXT, not the JSON type: MySQL 8 rewrites JSON documents (key order, number
-- forms), and clients are promised payload, overrides and data exactly as stored.

-- +goose Up
CREATE TABLE environments (
    id              CHAR(24)     NOT NULL,
    organization_id CHAR(24)     NOT NULL,
    name            VARCHAR(255) NOT NULL DEFAULT '',
    created_at      DATETIME(3)  NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE api_keys (
    id             CHAR(24)     NOT NULL,
    environment_id CHAR(24)     NOT NULL,
    name           VARCHAR(255) NOT NULL DEFAULT '',
    hash           CHAR(64)     NOT NULL,
    hint           CHAR(4)      NOT NULL,
    created_at     DATETIME(3)  NOT NULL,
    revoked_at     DATETIME(3)  NULL,
    PRIMARY KEY (id),
    UNIQUE KEY api_keys_hash (hash),
    KEY api_keys_environment (environment_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE subscribers (
    id              CHAR(24)     NOT NULL,
    environment_id  CHAR(24)     NOT NULL,
    organization_id CHAR(24)     NOT NULL,
    subscriber_id   VARBINARY(1020) NOT NULL,
    first_name      TEXT         NOT NULL,
    last_name       TEXT         NOT NULL,
    email           TEXT         NOT NULL,
    phone           TEXT         NOT NULL,
    avatar          TEXT         NOT NULL,
    locale          TEXT         NOT NULL,
    channels        LONGTEXT NULL,
    topics          LONGTEXT NULL,
    is_online       BOOLEAN      NULL,
    last_online_at  DATETIME(3)  NULL,
    v               INT          NOT NULL DEFAULT 0,
    data            LONGTEXT NULL,
    timezone        TEXT         NOT NULL,
    deleted         BOOLEAN      NOT NULL DEFAULT FALSE,
    created_at      DATETIME(3)  NOT NULL,
    updated_at      DATETIME(3)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY subscribers_environment_subscriber (environment_id, subscriber_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE templates (
    id                          CHAR(24)    NOT NULL,
    environment_id              CHAR(24)    NOT NULL,
    organization_id             CHAR(24)    NOT NULL,
    name                        TEXT        NOT NULL,
    description                 TEXT        NOT NULL,
    active                      BOOLEAN     NOT NULL DEFAULT FALSE,
    draft                       BOOLEAN     NOT NULL DEFAULT FALSE,
    preference_settings         LONGTEXT NULL,
    critical                    BOOLEAN     NOT NULL DEFAULT FALSE,
    tags                        LONGTEXT NULL,
    steps                       LONGTEXT NULL,
    creator_id                  VARCHAR(24) NOT NULL DEFAULT '',
    triggers                    LONGTEXT NULL,
    notification_group_id       VARCHAR(24) NOT NULL DEFAULT '',
    parent_id                   VARCHAR(24) NOT NULL DEFAULT '',
    deleted                     BOOLEAN     NOT NULL DEFAULT FALSE,
    deleted_at                  DATETIME(3) NULL,
    deleted_by                  TEXT        NOT NULL,
    notification_group          LONGTEXT NULL,
    data                        LONGTEXT NULL,
    workflow_integration_status LONGTEXT NULL,
    PRIMARY KEY (id),
    KEY templates_environment (environment_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Every list is "newest first, ties by id" within one environment, optionally narrowed
-- by channel, subscriber and transaction ids: one index per filter shape, each ending in
-- (created_at, id) so the order comes from the index and the page needs no sort.
CREATE TABLE messages (
    id                  CHAR(24)     NOT NULL,
    environment_id      CHAR(24)     NOT NULL,
    organization_id     CHAR(24)     NOT NULL,
    template_id         VARCHAR(24)  NOT NULL DEFAULT '',
    message_template_id VARCHAR(24)  NOT NULL DEFAULT '',
    notification_id     VARCHAR(24)  NOT NULL DEFAULT '',
    subscriber_id       CHAR(24)     NOT NULL,
    template_identifier VARCHAR(255) NOT NULL DEFAULT '',
    created_at          DATETIME(3)  NOT NULL,
    delivered_at        LONGTEXT NULL,
    last_seen_date      DATETIME(3)  NULL,
    last_read_date      DATETIME(3)  NULL,
    content             LONGTEXT NULL,
    transaction_id      VARBINARY(1020) NOT NULL,
    subject             TEXT         NOT NULL,
    channel             VARCHAR(16)  NOT NULL,
    `read`              BOOLEAN      NOT NULL DEFAULT FALSE,
    seen                BOOLEAN      NOT NULL DEFAULT FALSE,
    snoozed_until       DATETIME(3)  NULL,
    email               TEXT         NOT NULL,
    phone               TEXT         NOT NULL,
    direct_webhook_url  TEXT         NOT NULL,
    provider_id         VARCHAR(255) NOT NULL DEFAULT '',
    device_tokens       LONGTEXT NULL,
    title               TEXT         NOT NULL,
    cta                 LONGTEXT NOT NULL,
    feed_id             VARCHAR(24)  NOT NULL DEFAULT '',
    status              VARCHAR(64)  NOT NULL DEFAULT '',
    error_id            VARCHAR(255) NOT NULL DEFAULT '',
    error_text          TEXT         NOT NULL,
    payload             LONGTEXT NULL,
    overrides           LONGTEXT NULL,
    PRIMARY KEY (id),
    KEY messages_environment_created (environment_id, created_at, id),
    KEY messages_environment_channel_created (environment_id, channel, created_at, id),
    KEY messages_environment_subscriber_created (environment_id, subscriber_id, created_at, id),
    KEY messages_environment_subscriber_channel_created (environment_id, subscriber_id, channel, created_at, id),
    KEY messages_environment_transaction_created (environment_id, transaction_id, created_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE messages;
DROP TABLE templates;
DROP TABLE subscribers;
DROP TABLE api_keys;
DROP TABLE environments;
