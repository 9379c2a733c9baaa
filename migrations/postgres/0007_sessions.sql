-- Editors' login sessions, kept on the server so that logging out (or revoking the token) ends
-- them. Only a hash of the session id is stored: the database alone cannot become a session. The
-- key that signs session cookies now comes from configuration, never from the database.
CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    token_id   BIGINT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    -- Unix seconds, so that both databases compare it as a number.
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_by_token ON sessions (token_id);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

DELETE FROM settings WHERE key = 'session_key';
