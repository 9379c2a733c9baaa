//! API tokens: 256 random bits, shown once, stored hashed, checked in constant time.

use crate::store::{Scope, Store, TokenRow};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

const TOKEN_PREFIX: &str = "sw_";
/// Hex characters after `sw_` that are stored in clear to find the token's row.
const LOOKUP_CHARS: usize = 12;

/// A freshly generated token: the secret to show once, and what to store.
pub struct NewToken {
    pub secret: String,
    pub lookup: String,
    pub hash: String,
}

pub fn generate() -> NewToken {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let secret = format!("{TOKEN_PREFIX}{}", hex::encode(bytes));
    NewToken {
        lookup: lookup_key(&secret).expect("generated tokens are well formed").to_string(),
        hash: hash(&secret),
        secret,
    }
}

pub fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn lookup_key(secret: &str) -> Option<&str> {
    let hexpart = secret.strip_prefix(TOKEN_PREFIX)?;
    if hexpart.len() != 64 || !hexpart.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(&hexpart[..LOOKUP_CHARS])
}

/// Why a token was not accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Denied {
    /// Missing, malformed, unknown or revoked.
    Unauthenticated,
    /// Valid, but its scope does not allow this.
    Forbidden { has: Scope, needs: Scope },
}

/// The stored token `secret` is, whatever its scope; `None` when malformed, unknown or revoked.
pub async fn identify(store: &Store, secret: &str) -> Result<Option<TokenRow>, sqlx::Error> {
    let Some(lookup) = lookup_key(secret) else {
        return Ok(None);
    };
    let presented = hash(secret);
    let found = store
        .tokens_with_prefix(lookup)
        .await?
        .into_iter()
        .find(|row| bool::from(row.hash.as_bytes().ct_eq(presented.as_bytes())));
    if let Some(row) = &found {
        store.touch_token(row).await?;
    }
    Ok(found)
}

/// Checks `secret` against the store and the scope needed.
pub async fn verify(store: &Store, secret: &str, needs: Scope) -> Result<Result<TokenRow, Denied>, sqlx::Error> {
    Ok(judge(identify(store, secret).await?, needs))
}

/// Whether the token a secret identified (`None`: none) may do what needs `needs`.
pub fn judge(token: Option<TokenRow>, needs: Scope) -> Result<TokenRow, Denied> {
    let row = token.ok_or(Denied::Unauthenticated)?;
    if !row.scope.0.allows(needs) {
        return Err(Denied::Forbidden { has: row.scope.0, needs });
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_have_256_bits_and_a_lookup_prefix() {
        let a = generate();
        let b = generate();
        assert_ne!(a.secret, b.secret);
        assert_eq!(a.secret.len(), TOKEN_PREFIX.len() + 64);
        assert_eq!(a.lookup, &a.secret[3..15]);
        assert_eq!(a.hash, hash(&a.secret));
        assert!(!a.hash.contains(&a.secret[3..]));
    }

    #[test]
    fn malformed_tokens_have_no_lookup_key() {
        assert!(lookup_key("sw_abc").is_none());
        assert!(lookup_key(&format!("xx_{}", "a".repeat(64))).is_none());
        assert!(lookup_key(&format!("sw_{}", "g".repeat(64))).is_none());
    }
}
