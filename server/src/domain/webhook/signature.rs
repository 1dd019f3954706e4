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

/// A signing secret as the store gave it back: read ([`StoredSecret::Read`]), or the text that
/// did not read and why (a value changed by hand in the database, a damaged row). An attempt
/// signed by an unreadable secret fails, and is logged: never sent with an empty
/// `webhook-signature`. Its `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq)]
pub enum StoredSecret {
    /// The secret.
    Read(Secret),
    /// The stored text, kept to be written back unchanged, and why it did not read.
    Unreadable {
        /// The text as stored.
        text: String,
        /// Why it is no secret.
        reason: SecretError,
    },
}

impl StoredSecret {
    /// Reads a stored secret's text (a row's `secret` or `previous_secret`).
    pub fn read(text: &str) -> StoredSecret {
        match Secret::parse(text) {
            Ok(secret) => StoredSecret::Read(secret),
            Err(reason) => StoredSecret::Unreadable {
                text: text.to_owned(),
                reason,
            },
        }
    }

    /// The text to store: the secret's `whsec_` form, or the unreadable text as it was.
    pub fn stored(&self) -> String {
        match self {
            StoredSecret::Read(secret) => secret.to_string(),
            StoredSecret::Unreadable { text, .. } => text.clone(),
        }
    }

    /// The secret, or why the stored one does not read (`which`: `"secret"` or
    /// `"previous_secret"`, the column).
    ///
    /// # Errors
    ///
    /// [`UnreadableSecret`] naming the column and the reason.
    pub fn secret(&self, which: &'static str) -> Result<&Secret, UnreadableSecret> {
        match self {
            StoredSecret::Read(secret) => Ok(secret),
            StoredSecret::Unreadable { reason, .. } => Err(UnreadableSecret {
                which,
                reason: reason.clone(),
            }),
        }
    }
}

impl From<Secret> for StoredSecret {
    fn from(secret: Secret) -> StoredSecret {
        StoredSecret::Read(secret)
    }
}

impl fmt::Debug for StoredSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoredSecret::Read(secret) => write!(f, "Read({secret:?})"),
            StoredSecret::Unreadable { reason, .. } => write!(f, "Unreadable({reason:?})"),
        }
    }
}

/// The secrets that sign an attempt at `now_ms` (docs/contract/webhooks.md "Signatures"): `current`, then
/// `previous` while a rotation's overlap lasts (until `previous_until_ms`, Unix ms).
///
/// # Errors
///
/// [`UnreadableSecret`] when one that would sign does not read: the attempt fails rather
/// than go out signed by fewer secrets than the receiver may expect.
pub fn signing_secrets(
    current: &StoredSecret,
    previous: Option<&StoredSecret>,
    previous_until_ms: Option<i64>,
    now_ms: i64,
) -> Result<Vec<Secret>, UnreadableSecret> {
    let mut secrets = vec![current.secret("secret")?.clone()];
    if let (Some(previous), Some(until)) = (previous, previous_until_ms)
        && now_ms < until
    {
        secrets.push(previous.secret("previous_secret")?.clone());
    }
    Ok(secrets)
}

/// A stored signing secret that does not read: the attempt it would sign fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableSecret {
    /// The endpoint's column: `secret` or `previous_secret`.
    pub which: &'static str,
    /// Why its text is no secret.
    pub reason: SecretError,
}

impl fmt::Display for UnreadableSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not sent: the endpoint's stored {} does not read ({}); rotate the secret (POST /v1/webhook_endpoints/{{id}}/rotate_secret)",
            self.which, self.reason
        )
    }
}

impl std::error::Error for UnreadableSecret {}

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
    fn a_stored_secret_reads_or_says_why_and_is_written_back_as_it_was() {
        let good = StoredSecret::read(SPEC_SECRET);
        assert_eq!(good.stored(), SPEC_SECRET);
        assert_eq!(
            good.secret("secret"),
            Ok(&Secret::parse(SPEC_SECRET).unwrap())
        );
        for (text, reason) in [
            ("", SecretError::Prefix),
            ("whsec_", SecretError::Length(0)),
            ("whsec_###", SecretError::Base64),
            ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", SecretError::Prefix),
        ] {
            let bad = StoredSecret::read(text);
            assert_eq!(bad.stored(), text);
            let e = bad.secret("previous_secret").unwrap_err();
            assert_eq!(e.reason, reason);
            assert!(
                e.to_string()
                    .contains("stored previous_secret does not read"),
                "{e}"
            );
            assert!(!format!("{bad:?}").contains(text) || text.is_empty());
        }
        assert!(!format!("{good:?}").contains("MfKQ"));
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
