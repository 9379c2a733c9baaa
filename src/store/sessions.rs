//! Editors' login sessions: a hash of each session id, its token and when it expires. Revoking a
//! token deletes its sessions with it (a foreign key that cascades).

use super::db::sql;
use super::{Store, TokenRow};
use time::OffsetDateTime;

impl Store {
    /// Records a new session of `token_id` until `expires_at`, and forgets sessions that expired.
    pub async fn create_session(
        &self,
        id_hash: &str,
        token_id: i64,
        expires_at: OffsetDateTime,
    ) -> Result<(), sqlx::Error> {
        let now = OffsetDateTime::now_utc();
        self.execute(&sql("DELETE FROM sessions WHERE expires_at <= $1").bind(now.unix_timestamp())).await?;
        let q = sql("INSERT INTO sessions (id_hash, token_id, created_at, expires_at) VALUES ($1, $2, $3, $4)");
        self.execute(&q.bind(id_hash).bind(token_id).bind(now).bind(expires_at.unix_timestamp())).await.map(drop)
    }

    /// The token of an unexpired session, if the session and its token both still exist.
    pub async fn session_token(&self, id_hash: &str) -> Result<Option<TokenRow>, sqlx::Error> {
        let q = sql("SELECT t.id, t.name, t.scope, t.created_at, t.last_used_at, t.hash
             FROM sessions s JOIN tokens t ON t.id = s.token_id
             WHERE s.id_hash = $1 AND s.expires_at > $2");
        self.optional(&q.bind(id_hash).bind(OffsetDateTime::now_utc().unix_timestamp())).await
    }

    /// Ends a session; nothing happens when there is none.
    pub async fn end_session(&self, id_hash: &str) -> Result<(), sqlx::Error> {
        self.execute(&sql("DELETE FROM sessions WHERE id_hash = $1").bind(id_hash)).await.map(drop)
    }
}
