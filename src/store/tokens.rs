//! API tokens, stored as a prefix to find the row and a SHA-256 hash to check it.

use super::db::sql;
use super::Store;
use serde::Serialize;
use std::fmt;
use time::OffsetDateTime;

/// What a token allows. Machine tokens submit runs, or bisect (which submits runs too); people's
/// tokens edit and administer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Submit runs.
    Ingest,
    /// Record bisections, and submit runs: a bisection submits the runs it measured (`--submit`).
    Bisect,
    /// Edit regressions, notes and links.
    Editor,
    /// Everything an editor may do, administration, and submitting runs.
    Admin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Ingest => "ingest",
            Scope::Bisect => "bisect",
            Scope::Editor => "editor",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s {
            "ingest" => Scope::Ingest,
            "bisect" => Scope::Bisect,
            "editor" => Scope::Editor,
            "admin" => Scope::Admin,
            _ => return None,
        })
    }

    /// Whether a token of this scope may do what `needed` guards.
    pub fn allows(self, needed: Scope) -> bool {
        match needed {
            Scope::Ingest => matches!(self, Scope::Ingest | Scope::Bisect | Scope::Admin),
            Scope::Bisect => matches!(self, Scope::Bisect | Scope::Admin),
            Scope::Editor => matches!(self, Scope::Editor | Scope::Admin),
            Scope::Admin => self == Scope::Admin,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored token, without anything that could reconstruct it.
#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct TokenRow {
    pub id: i64,
    pub name: String,
    #[sqlx(try_from = "String")]
    pub scope: ScopeColumn,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(skip)]
    pub hash: String,
}

/// A scope read back from its column.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(transparent)]
pub struct ScopeColumn(pub Scope);

impl TryFrom<String> for ScopeColumn {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Scope::parse(&s).map(ScopeColumn).ok_or_else(|| format!("unknown scope {s:?}"))
    }
}

/// Only touch `last_used_at` when it is this stale, so busy tokens do not write on every request.
const LAST_USED_RESOLUTION: time::Duration = time::Duration::seconds(60);

/// A token's stored form: its name, scope and hash, never the token, as moved between stores.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StoredToken {
    pub name: String,
    pub scope: String,
    pub prefix: String,
    pub hash: String,
    pub created_at: OffsetDateTime,
    pub last_used_at: Option<OffsetDateTime>,
}

const TOKEN_COLUMNS: &str = "SELECT id, name, scope, created_at, last_used_at, hash FROM tokens";

impl Store {
    /// Stores a new token. `Ok(false)` when the name is taken.
    pub async fn create_token(&self, name: &str, scope: Scope, prefix: &str, hash: &str) -> Result<bool, sqlx::Error> {
        let q = sql("INSERT INTO tokens (name, scope, prefix, hash, created_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (name) DO NOTHING");
        let q = q.bind(name).bind(scope.as_str()).bind(prefix).bind(hash).bind(OffsetDateTime::now_utc());
        Ok(self.execute(&q).await? == 1)
    }

    pub async fn list_tokens(&self) -> Result<Vec<TokenRow>, sqlx::Error> {
        self.all(&sql(format!("{TOKEN_COLUMNS} ORDER BY name"))).await
    }

    /// Deletes the named token, and its sessions with it. `Ok(false)` when there was none.
    pub async fn revoke_token(&self, name: &str) -> Result<bool, sqlx::Error> {
        Ok(self.execute(&sql("DELETE FROM tokens WHERE name = $1").bind(name)).await? == 1)
    }

    /// Tokens whose prefix matches; the caller compares hashes in constant time.
    pub async fn tokens_with_prefix(&self, prefix: &str) -> Result<Vec<TokenRow>, sqlx::Error> {
        self.all(&sql(format!("{TOKEN_COLUMNS} WHERE prefix = $1")).bind(prefix)).await
    }

    /// A token by id, to check that a session's token has not been revoked.
    pub async fn token_by_id(&self, id: i64) -> Result<Option<TokenRow>, sqlx::Error> {
        self.optional(&sql(format!("{TOKEN_COLUMNS} WHERE id = $1")).bind(id)).await
    }

    /// Records that a token was just used, at most once a minute: a busy token's requests skip
    /// the write (on SQLite, even an update that changes nothing waits for the write lock).
    pub async fn touch_token(&self, token: &TokenRow) -> Result<(), sqlx::Error> {
        let now = OffsetDateTime::now_utc();
        let stale = now - LAST_USED_RESOLUTION;
        if token.last_used_at.is_some_and(|at| at >= stale) {
            return Ok(());
        }
        let q =
            sql("UPDATE tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)");
        self.execute(&q.bind(now).bind(token.id).bind(stale)).await.map(drop)
    }

    /// Every token's stored form, by name.
    pub async fn stored_tokens(&self) -> Result<Vec<StoredToken>, sqlx::Error> {
        self.all(&sql("SELECT name, scope, prefix, hash, created_at, last_used_at FROM tokens ORDER BY name")).await
    }

    /// Adds a token carried over from another store; `Ok(false)` when its name or hash is taken.
    pub async fn add_stored_token(&self, t: &StoredToken) -> Result<bool, sqlx::Error> {
        let q = sql("INSERT INTO tokens (name, scope, prefix, hash, created_at, last_used_at)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING");
        let q = q.bind(&t.name).bind(&t.scope).bind(&t.prefix).bind(&t.hash).bind(t.created_at).bind(t.last_used_at);
        Ok(self.execute(&q).await? == 1)
    }
}
