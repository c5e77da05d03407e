-- Keys and the indexes of the server's read paths (models/migrations), newest first as
-- the lists read them. The server's changed_at indexes serve its live event feed, which
-- the peer does not have, so they are left out. VACUUM sets the visibility map, as
-- autovacuum would in time after a bulk load, so that index-only scans (the count, the
-- offset) need not visit the table.
ALTER TABLE subscribers ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX subscribers_environment_subscriber ON subscribers (environment_id, subscriber_id);
ALTER TABLE templates ADD PRIMARY KEY (id);
CREATE INDEX templates_environment ON templates (environment_id);
ALTER TABLE messages ADD PRIMARY KEY (id);
ALTER TABLE messages ADD FOREIGN KEY (subscriber_id) REFERENCES subscribers (id);
ALTER TABLE messages ADD FOREIGN KEY (template_id) REFERENCES templates (id);
CREATE INDEX messages_environment_created ON messages (environment_id, created_at DESC, id DESC);
CREATE INDEX messages_environment_channel_created ON messages (environment_id, channel, created_at DESC, id DESC);
CREATE INDEX messages_environment_subscriber_created ON messages (environment_id, subscriber_id, created_at DESC, id DESC);
CREATE INDEX messages_environment_subscriber_channel_created ON messages (environment_id, subscriber_id, channel, created_at DESC, id DESC);
CREATE INDEX messages_environment_transaction_created ON messages (environment_id, transaction_id, created_at DESC, id DESC);
CREATE INDEX messages_template ON messages (template_id);
VACUUM (ANALYZE) subscribers, templates, messages;
