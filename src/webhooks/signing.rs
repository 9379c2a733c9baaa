//! Webhook signatures: `X-Slopewatch-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`.
//!
//! The timestamp is inside the signed text so a captured request cannot be replayed later with a
//! fresh timestamp; receivers reject timestamps too far from their clock.

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Header carrying the delivery id, the same on every retry of one delivery.
pub const DELIVERY_HEADER: &str = "x-slopewatch-delivery";
/// Header carrying the unix time of the attempt, in seconds.
pub const TIMESTAMP_HEADER: &str = "x-slopewatch-timestamp";
/// Header carrying the signature.
pub const SIGNATURE_HEADER: &str = "x-slopewatch-signature";
/// Header naming the event, e.g. `regression.opened`.
pub const EVENT_HEADER: &str = "x-slopewatch-event";

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The value of `X-Slopewatch-Signature` for a body sent at `timestamp`.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    format!("sha256={}", hex::encode(mac(secret, timestamp, body).finalize().into_bytes()))
}

/// Why a received webhook was not accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Rejected {
    Malformed,
    Stale,
    BadSignature,
}

/// What a receiver does: checks the signature in constant time and that the timestamp is within
/// `tolerance_secs` of `now`.
pub fn verify(
    secret: &str,
    timestamp: &str,
    signature: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
) -> Result<(), Rejected> {
    let timestamp: i64 = timestamp.trim().parse().map_err(|_| Rejected::Malformed)?;
    let given = signature.trim().strip_prefix("sha256=").ok_or(Rejected::Malformed)?;
    let given = hex::decode(given).map_err(|_| Rejected::Malformed)?;
    if (now - timestamp).abs() > tolerance_secs {
        return Err(Rejected::Stale);
    }
    mac(secret, timestamp, body).verify_slice(&given).map_err(|_| Rejected::BadSignature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_matches_an_independent_hmac() {
        // HMAC-SHA256("key", "1700000000.{}") computed with `openssl dgst -sha256 -hmac key`.
        let expected = "sha256=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae";
        let got = sign("key", 1_700_000_000, b"{}");
        assert_eq!(got, expected);
        assert!(verify("key", "1700000000", &got, b"{}", 1_700_000_010, 300).is_ok());
    }

    #[test]
    fn tampering_staleness_and_garbage_are_rejected() {
        let sig = sign("secret", 100, b"body");
        assert_eq!(verify("secret", "100", &sig, b"bodY", 100, 300), Err(Rejected::BadSignature));
        assert_eq!(verify("other", "100", &sig, b"body", 100, 300), Err(Rejected::BadSignature));
        assert_eq!(verify("secret", "101", &sig, b"body", 100, 300), Err(Rejected::BadSignature));
        assert_eq!(verify("secret", "100", &sig, b"body", 1000, 300), Err(Rejected::Stale));
        assert_eq!(verify("secret", "x", &sig, b"body", 100, 300), Err(Rejected::Malformed));
        assert_eq!(verify("secret", "100", "md5=00", b"body", 100, 300), Err(Rejected::Malformed));
    }
}
