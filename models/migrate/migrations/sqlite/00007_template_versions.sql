-- The SQLite twin of mysql/00007_template_versions.sql. SQLite has no ON UPDATE, so
-- triggers stamp the rows in the layout of 00005; a stamp only ever moves forward (by at
-- least a millisecond), so two changes within one millisecond still give two versions.

-- +goose Up
ALTER TABLE templates ADD COLUMN changed_at TEXT NOT NULL DEFAULT '';
UPDATE templates SET changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now');

-- +goose StatementBegin
CREATE TRIGGER templates_stamp_insert AFTER INSERT ON templates
WHEN NEW.changed_at = ''
BEGIN
    UPDATE templates SET changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER templates_stamp_update AFTER UPDATE ON templates
WHEN NEW.changed_at = OLD.changed_at
BEGIN
    UPDATE templates
    SET changed_at = max(strftime('%Y-%m-%d %H:%M:%f', 'now'), strftime('%Y-%m-%d %H:%M:%f', OLD.changed_at, '+0.001 seconds'))
    WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER templates_stamp_update;
DROP TRIGGER templates_stamp_insert;
ALTER TABLE templates DROP COLUMN changed_at;
