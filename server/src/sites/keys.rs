//! API keys (docs/contract/server.md "Sites and keys"; API document section 5): their form, their SHA-256 hash
//! (the only form the server stores) and the short name a log line uses for a key.

use std::fmt;

use sha2::{Digest, Sha256};

/// The two key prefixes of API document section 5: live keys and test keys.
pub const KEY_PREFIXES: [&str; 2] = ["sk_live_", "sk_test_"];

/// The prefixes of publishable keys (docs/contract/relay.md): they may only send events to the relay.
pub const PUBLISHABLE_KEY_PREFIXES: [&str; 2] = ["pk_live_", "pk_test_"];

/// What a well-formed key may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// `sk_live_`/`sk_test_`: the REST API (docs/contract/server.md, docs/contract/read-api.md); never in a page.
    Secret,
    /// `pk_live_`/`pk_test_`: the relay only (docs/contract/relay.md); safe in a page.
    Publishable,
}

/// The fewest characters of `[A-Za-z0-9]` after the prefix (docs/contract/server.md).
pub const MIN_KEY_SECRET_CHARS: usize = 16;

/// The prefix of a key hash in a sites file: `sha256:` then 64 lowercase hex digits.
pub const HASH_PREFIX: &str = "sha256:";

/// The SHA-256 hash of an API key: what a sites file stores and what requests are looked up by.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash([u8; 32]);

impl KeyHash {
    /// The hash of a key as it arrives in `Authorization: Bearer <key>` (the whole key, prefix
    /// included, as UTF-8 bytes).
    pub fn of_key(key: &str) -> KeyHash {
        KeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// Reads the sites-file form `sha256:<64 lowercase hex digits>`.
    ///
    /// # Errors
    ///
    /// A message naming what is wrong; it never repeats the text when the text looks like a
    /// key in clear (a clear key must not end up in a log).
    pub fn parse(text: &str) -> Result<KeyHash, String> {
        if looks_like_key(text) {
            return Err(
                "this is an API key in clear; store its hash instead: `nudge-rules-server hash-key KEY` prints it"
                    .to_owned(),
            );
        }
        let Some(hex_digits) = text.strip_prefix(HASH_PREFIX) else {
            return Err(format!(
                "{text:?} is not a key hash; expected \"{HASH_PREFIX}\" followed by 64 lowercase hex digits"
            ));
        };
        let well_formed = hex_digits.len() == 64
            && hex_digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let mut bytes = [0u8; 32];
        if !well_formed || hex::decode_to_slice(hex_digits, &mut bytes).is_err() {
            return Err(format!(
                "{text:?} is not a key hash; after \"{HASH_PREFIX}\" come exactly 64 lowercase hex digits (got {} characters)",
                hex_digits.chars().count()
            ));
        }
        Ok(KeyHash(bytes))
    }

    /// The name of the key in log lines and on the admin listener: the first 8 hex digits of
    /// its hash (docs/contract/server.md), e.g. `3f9a0c1e`.
    pub fn log_id(&self) -> String {
        hex::encode(self.0.get(..4).unwrap_or_default())
    }
}

impl fmt::Display for KeyHash {
    /// The sites-file form, `sha256:<64 hex digits>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{HASH_PREFIX}{}", hex::encode(self.0))
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({})", self.log_id())
    }
}

/// Whether `text` has the form of an API key (docs/contract/server.md): `sk_live_` or `sk_test_` followed by at
/// least 16 characters, all of `[A-Za-z0-9]`.
pub fn is_well_formed_key(text: &str) -> bool {
    key_kind(text) == Some(KeyKind::Secret)
}

/// The kind of a well-formed key (secret or publishable, docs/contract/server.md and docs/contract/relay.md), `None` for anything
/// else.
pub fn key_kind(text: &str) -> Option<KeyKind> {
    let well_formed = |prefixes: &[&str]| {
        prefixes.iter().any(|prefix| {
            text.strip_prefix(prefix).is_some_and(|secret| {
                secret.len() >= MIN_KEY_SECRET_CHARS
                    && secret.bytes().all(|b| b.is_ascii_alphanumeric())
            })
        })
    };
    if well_formed(&KEY_PREFIXES) {
        Some(KeyKind::Secret)
    } else if well_formed(&PUBLISHABLE_KEY_PREFIXES) {
        Some(KeyKind::Publishable)
    } else {
        None
    }
}

/// Whether `text` starts like a key, well formed or not (used to refuse clear keys in a sites
/// file without echoing them).
fn looks_like_key(text: &str) -> bool {
    KEY_PREFIXES
        .iter()
        .chain(&PUBLISHABLE_KEY_PREFIXES)
        .any(|prefix| text.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_form() {
        assert!(is_well_formed_key("sk_test_abcdefghijklmnop"));
        assert!(is_well_formed_key("sk_live_ABCDEFGH12345678xyz"));
        assert!(!is_well_formed_key("sk_test_abcdefghijklmno")); // 15
        assert!(!is_well_formed_key("sk_test_abcdefghijklmn-p"));
        assert!(!is_well_formed_key("pk_test_abcdefghijklmnop"));
        assert!(!is_well_formed_key("sk_test_abcdefghijklmnopé"));
        assert!(!is_well_formed_key(""));
        assert_eq!(
            key_kind("pk_test_abcdefghijklmnop"),
            Some(KeyKind::Publishable)
        );
        assert_eq!(key_kind("pk_live_abcdefghijklmno"), None);
        assert_eq!(key_kind("sk_live_abcdefghijklmnop"), Some(KeyKind::Secret));
    }

    #[test]
    fn hash_round_trip_and_log_id() {
        let hash = KeyHash::of_key("sk_test_abcdefghijklmnop");
        let text = hash.to_string();
        assert!(text.starts_with("sha256:") && text.len() == 7 + 64);
        assert_eq!(KeyHash::parse(&text), Ok(hash));
        assert_eq!(hash.log_id(), text.get(7..15).unwrap());
    }

    #[test]
    fn bad_hashes_are_named_and_clear_keys_never_echoed() {
        let err = KeyHash::parse("sk_live_secretsecretsecret1").unwrap_err();
        assert!(!err.contains("secretsecret"), "{err}");
        assert!(err.contains("hash-key"));
        assert!(
            KeyHash::parse("sha256:ABC")
                .unwrap_err()
                .contains("64 lowercase hex")
        );
        let upper = format!("sha256:{}", "A".repeat(64));
        assert!(KeyHash::parse(&upper).is_err());
        assert!(KeyHash::parse("md5:00").unwrap_err().contains("\"md5:00\""));
    }
}
