//! Webhook signatures (docs/contract/webhooks.md "Signatures"): Standard Webhooks v1.
//!
//! Each delivery carries `webhook-id` (the message id), `webhook-timestamp` (Unix seconds of
//! the attempt) and `webhook-signature`: `v1,` then the standard base64 of
//! HMAC-SHA256(secret, `"{id}.{timestamp}.{body}"`), one per secret, space-separated (two during
//! the 24 hours after a rotation). A secret is `whsec_` then the standard base64 of 24 to 64
//! bytes; the bytes, not the text, are the HMAC key. HMAC, SHA-256 and base64 come from the
//! `hmac`, `sha2` and `base64` crates; the tests check deliveries with the `standardwebhooks`
//! package of PyPI, an independent verifier.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header naming the message (the same on every attempt and resend).
pub const HEADER_ID: &str = "webhook-id";
/// The header with the attempt's time, Unix seconds.
pub const HEADER_TIMESTAMP: &str = "webhook-timestamp";
/// The header with the signatures.
pub const HEADER_SIGNATURE: &str = "webhook-signature";

/// The prefix of a secret's text.
pub const SECRET_PREFIX: &str = "whsec_";
/// Bytes of a secret the server makes (within the 24 to 64 docs/contract/webhooks.md allows).
pub const GENERATED_SECRET_BYTES: usize = 32;
/// Fewest bytes of a secret (docs/contract/webhooks.md).
pub const MIN_SECRET_BYTES: usize = 24;
/// Most bytes of a secret (docs/contract/webhooks.md).
pub const MAX_SECRET_BYTES: usize = 64;

/// An endpoint's signing secret: 24 to 64 bytes, written `whsec_` + base64 (its `Display`).
/// Its `Debug` does not show the bytes, so a logged value leaks nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

/// Why a secret's text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretError {
    /// The text does not start with `whsec_`.
    Prefix,
    /// What follows `whsec_` is not standard base64.
    Base64,
    /// The decoded secret has this many bytes, outside 24 to 64.
    Length(usize),
    /// The system's random source failed (making a secret).
    Random(String),
}

impl fmt::Display for SecretError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretError::Prefix => write!(f, "a webhook secret starts with {SECRET_PREFIX:?}"),
            SecretError::Base64 => write!(
                f,
                "a webhook secret is {SECRET_PREFIX:?} then standard base64 (A-Z, a-z, 0-9, '+', '/', '=' padding)"
            ),
            SecretError::Length(n) => write!(
                f,
                "a webhook secret holds {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes, this one {n}"
            ),
            SecretError::Random(e) => write!(f, "no random source for a webhook secret: {e}"),
        }
    }
}

impl std::error::Error for SecretError {}

impl Secret {
    /// A new secret of [`GENERATED_SECRET_BYTES`] random bytes from the system's source.
    ///
    /// # Errors
    ///
    /// [`SecretError::Random`] when the system has no random source.
    pub fn generate() -> Result<Secret, SecretError> {
        let mut bytes = vec![0u8; GENERATED_SECRET_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| SecretError::Random(e.to_string()))?;
        Ok(Secret(bytes))
    }

    /// Reads a secret's text (`whsec_` + standard base64 of 24 to 64 bytes), as stored.
    ///
    /// # Errors
    ///
    /// [`SecretError::Prefix`], [`SecretError::Base64`] or [`SecretError::Length`].
    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::Prefix)?;
        let bytes = STANDARD.decode(encoded).map_err(|_| SecretError::Base64)?;
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&bytes.len()) {
            return Err(SecretError::Length(bytes.len()));
        }
        Ok(Secret(bytes))
    }

    /// `v1,` and the base64 HMAC-SHA256 of `"{msg_id}.{timestamp_s}.{body}"` with this secret.
    pub fn sign(&self, msg_id: &str, timestamp_s: i64, body: &[u8]) -> String {
        // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) else {
            return String::new();
        };
        mac.update(msg_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp_s.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SECRET_PREFIX}{}", STANDARD.encode(&self.0))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

/// The `webhook-signature` header of one attempt: one `v1,...` per secret (the current one
/// first), space-separated.
pub fn signature_header<'a>(
    secrets: impl IntoIterator<Item = &'a Secret>,
    msg_id: &str,
    timestamp_s: i64,
    body: &[u8],
) -> String {
    secrets
        .into_iter()
        .map(|s| s.sign(msg_id, timestamp_s, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    // The example of the Standard Webhooks specification and of its reference libraries' tests
    // (standard-webhooks/libraries, python/tests): this secret, id, timestamp and body sign to
    // this value.
    const SPEC_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const SPEC_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const SPEC_TIMESTAMP: i64 = 1_614_265_330;
    const SPEC_BODY: &str = r#"{"test": 2432232314}"#;
    const SPEC_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn signs_the_standard_webhooks_example() {
        let secret = Secret::parse(SPEC_SECRET).unwrap();
        assert_eq!(
            secret.sign(SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY.as_bytes()),
            SPEC_SIGNATURE
        );
        assert_eq!(secret.to_string(), SPEC_SECRET);
    }

    #[test]
    fn secrets_are_whsec_and_24_to_64_bytes() {
        let made = Secret::generate().unwrap();
        assert_eq!(Secret::parse(&made.to_string()).unwrap(), made);
        assert_ne!(made, Secret::generate().unwrap());
        assert_eq!(format!("{made:?}"), "Secret(32 bytes)");
        assert_eq!(
            Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            Err(SecretError::Prefix)
        );
        assert_eq!(Secret::parse("whsec_not base64!"), Err(SecretError::Base64));
        let short = format!("whsec_{}", STANDARD.encode([7u8; 23]));
        assert_eq!(Secret::parse(&short), Err(SecretError::Length(23)));
        let long = format!("whsec_{}", STANDARD.encode([7u8; 65]));
        assert_eq!(Secret::parse(&long), Err(SecretError::Length(65)));
        assert!(Secret::parse(&format!("whsec_{}", STANDARD.encode([7u8; 64]))).is_ok());
        assert!(
            SecretError::Length(23)
                .to_string()
                .contains("24 to 64 bytes, this one 23")
        );
    }

    #[test]
    fn a_rotation_signs_with_both_secrets() {
        let old = Secret::parse(SPEC_SECRET).unwrap();
        let new = Secret::generate().unwrap();
        let header = signature_header([&new, &old], SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY.as_bytes());
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1], SPEC_SIGNATURE);
        assert!(parts[0].starts_with("v1,") && parts[0] != SPEC_SIGNATURE);
    }
}
