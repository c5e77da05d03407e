-- The peer's copy of the server's tables: the columns the benchmark's selection reads,
-- JSON as jsonb, and foreign keys messages -> subscribers and messages -> templates so
-- PostGraphile exposes the relations. Indexes and keys are added after the copy
-- (indexes.sql), as a bulk load does.
CREATE TABLE subscribers (
  id text NOT NULL,
  environment_id text NOT NULL,
  organization_id text NOT NULL,
  subscriber_id text NOT NULL,
  first_name text NOT NULL,
  last_name text NOT NULL,
  email text NOT NULL,
  phone text NOT NULL,
  avatar text NOT NULL,
  locale text NOT NULL,
  data jsonb,
  created_at timestamp(3) NOT NULL,
  updated_at timestamp(3) NOT NULL
);

CREATE TABLE templates (
  id text NOT NULL,
  environment_id text NOT NULL,
  organization_id text NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  active boolean NOT NULL
);

CREATE TABLE messages (
  id text NOT NULL,
  environment_id text NOT NULL,
  organization_id text NOT NULL,
  template_id text,
  subscriber_id text NOT NULL,
  created_at timestamp(3) NOT NULL,
  transaction_id text NOT NULL,
  subject text NOT NULL,
  title text NOT NULL,
  channel text NOT NULL,
  read boolean NOT NULL,
  seen boolean NOT NULL,
  status text NOT NULL,
  content jsonb,
  cta jsonb NOT NULL,
  payload jsonb,
  -- The last mark, as the server keeps it beside the cta document.
  action_status text NOT NULL,
  action_result_type text NOT NULL,
  action_result_payload jsonb
);
