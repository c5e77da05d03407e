-- A version for every subscriber row, kept by the database for every writer, as
-- 00007 keeps one for templates: lists read subscribers from a per-instance cache keyed
-- by (id, changed_at) and ask only for the version in the page's own statement, instead
-- of joining twenty columns onto every message of the page. ON UPDATE fires only when a
-- value actually changes; TIMESTAMP(6) has no trigger behind it, so it holds on TiDB too.

-- +goose Up
ALTER TABLE subscribers
    ADD COLUMN changed_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6);

-- +goose Down
ALTER TABLE subscribers DROP COLUMN changed_at;
