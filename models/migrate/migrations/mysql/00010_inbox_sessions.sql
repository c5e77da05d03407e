-- What the platform's inbox clients need to open a session without an API key:
--
-- environments.application_identifier, the environment's public name for browsers
-- (the platform's "application identifier"), given out by `apikey create`; NULL until an
-- environment gets one, so the unique key allows any number of environments without.
--
-- api_keys.sealed, the key itself sealed with AES-256-GCM under the server's
-- API_KEY_SECRET (models/keyseal), beside its hash: a subscriberHash is an HMAC keyed
-- with the API key, which a hash cannot check. NULL for keys made without a secret set.

-- +goose Up
ALTER TABLE environments
    ADD COLUMN application_identifier VARCHAR(64) NULL,
    ADD UNIQUE KEY environments_application_identifier (application_identifier);
ALTER TABLE api_keys ADD COLUMN sealed VARBINARY(255) NULL;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN sealed;
ALTER TABLE environments
    DROP KEY environments_application_identifier,
    DROP COLUMN application_identifier;
