-- The SQLite twin of mysql/00008_subscriber_versions.sql, stamped by triggers as
-- 00007 stamps templates: a stamp only ever moves forward (by at least a millisecond),
-- so two changes within one millisecond still give two versions.

-- +goose Up
ALTER TABLE subscribers ADD COLUMN changed_at TEXT NOT NULL DEFAULT '';
UPDATE subscribers SET changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now');

-- +goose StatementBegin
CREATE TRIGGER subscribers_stamp_insert AFTER INSERT ON subscribers
WHEN NEW.changed_at = ''
BEGIN
    UPDATE subscribers SET changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER subscribers_stamp_update AFTER UPDATE ON subscribers
WHEN NEW.changed_at = OLD.changed_at
BEGIN
    UPDATE subscribers
    SET changed_at = max(strftime('%Y-%m-%d %H:%M:%f', 'now'), strftime('%Y-%m-%d %H:%M:%f', OLD.changed_at, '+0.001 seconds'))
    WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER subscribers_stamp_update;
DROP TRIGGER subscribers_stamp_insert;
ALTER TABLE subscribers DROP COLUMN changed_at;
