-- A version for every template row, kept by the database for every writer: lists read
-- templates from a per-instance cache keyed by (id, changed_at) and ask only for the
-- version in the page's own statement, so a template (about 4 KB of steps) is loaded and
-- decoded once per change instead of once per page. ON UPDATE fires only when a value
-- actually changes. TIMESTAMP(6) has no trigger behind it, so it holds on TiDB too.

-- +goose Up
ALTER TABLE templates
    ADD COLUMN changed_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6);

-- +goose Down
ALTER TABLE templates DROP COLUMN changed_at;
