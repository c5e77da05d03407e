-- The SQLite twin of mysql/00014_trusted_documents.sql.

-- +goose Up
CREATE TABLE trusted_documents (
    id             TEXT     NOT NULL PRIMARY KEY,
    sha256         TEXT     NOT NULL,
    body           TEXT     NOT NULL,
    operation_name TEXT     NOT NULL DEFAULT '',
    manifest       TEXT     NOT NULL DEFAULT '',
    created_at     DATETIME NOT NULL
);
CREATE INDEX trusted_documents_sha256 ON trusted_documents (sha256);

-- +goose Down
DROP TABLE trusted_documents;
