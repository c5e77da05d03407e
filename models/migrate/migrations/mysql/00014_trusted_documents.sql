-- Trusted documents: the GraphQL documents frontends were built with, loaded from their
-- manifests by `documents add`, which subscriber sessions may be limited to
-- (TRUSTED_DOCUMENTS=require; docs/browsers.md). Global, with no environment_id: a
-- frontend build serves every tenant, and tenancy comes from the caller's credentials.
-- The id is the manifest's own (a hash or a custom id): nothing numbers the rows.

-- +goose Up
CREATE TABLE trusted_documents (
    id             VARCHAR(200) NOT NULL,
    sha256         CHAR(64)     NOT NULL,
    body           MEDIUMTEXT   NOT NULL,
    operation_name VARCHAR(200) NOT NULL DEFAULT '',
    manifest       VARCHAR(200) NOT NULL DEFAULT '',
    created_at     DATETIME(3)  NOT NULL,
    PRIMARY KEY (id),
    KEY trusted_documents_sha256 (sha256)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE trusted_documents;
