-- The peer's row-level security: a request with a JWT runs as msgpeer_subscriber (the
-- token's role claim, or the default role without one) and sees only the messages of
-- the token's subscriber_id claim, which PostGraphile sets as jwt.claims.subscriber_id.
-- The plain peer connects as the superuser postgres, whom the policy does not restrict.
CREATE ROLE msgpeer_subscriber NOLOGIN;
GRANT USAGE ON SCHEMA public TO msgpeer_subscriber;
GRANT SELECT ON subscribers, templates, messages TO msgpeer_subscriber;
GRANT UPDATE (action_status, action_result_type, action_result_payload) ON messages TO msgpeer_subscriber;
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY messages_own ON messages TO msgpeer_subscriber
  USING (subscriber_id = current_setting('jwt.claims.subscriber_id', true));
