//! Signed page cursors (docs/contract/read-api.md "Pagination"): opaque, URL-safe, at most [`MAX_CURSOR_BYTES`],
//! HMAC-SHA256 with the server's secret. A cursor carries the walk's resolved window, the
//! filters of its first request and the last record's (time, id); the signature also covers the
//! endpoint, the site and the mode, which the cursor does not carry, so a cursor of another
//! endpoint, site or mode fails the check like a damaged one.
//!
//! Form: `base64url(payload JSON) "." base64url(HMAC)`, no padding.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use nudge_rules::NudgeType;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::event::Scope;
use super::time::ExactTime;

/// The longest cursor the server writes or reads, in bytes (docs/contract/read-api.md).
pub const MAX_CURSOR_BYTES: usize = 512;

/// The shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;

/// Which list a cursor walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET /v1/sessions`.
    Sessions,
    /// `GET /v1/nudges`.
    Nudges,
    /// `GET /v1/config/versions`.
    ConfigVersions,
    /// `GET /v1/webhook_endpoints`.
    WebhookEndpoints,
    /// `GET /v1/webhook_endpoints/{id}/attempts` (the endpoint's id is the cursor's `last_id`'s
    /// partner: the walk is over one endpoint's log).
    WebhookAttempts,
}

impl Endpoint {
    fn tag(self) -> &'static str {
        match self {
            Endpoint::Sessions => "sessions",
            Endpoint::Nudges => "nudges",
            Endpoint::ConfigVersions => "config_versions",
            Endpoint::WebhookEndpoints => "webhook_endpoints",
            Endpoint::WebhookAttempts => "webhook_attempts",
        }
    }
}

/// What a page cursor carries (all times Unix milliseconds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorState {
    /// The walk's `from`, resolved on its first page.
    #[serde(rename = "f")]
    pub from_ms: i64,
    /// The walk's `to`, resolved on its first page.
    #[serde(rename = "t")]
    pub to_ms: i64,
    /// The filters of the first request, as given (absent ones `None`): `from`, `to`,
    /// `session_id`, `type`. A later request may omit them or repeat them; a different value
    /// is an InvalidCursor.
    #[serde(rename = "g")]
    pub filters: Filters,
    /// The last record of the previous page: its time.
    #[serde(rename = "a")]
    pub last_at_ms: i64,
    /// The last record of the previous page: its id.
    #[serde(rename = "i")]
    pub last_id: String,
    /// The store's walk revision when the walk began ([`Walk::rev`]); 0 in cursors written
    /// before walks had one.
    #[serde(rename = "w", default)]
    pub walk_rev: i64,
}

impl CursorState {
    /// The last record of the previous page, where the next page starts.
    pub fn position(&self) -> Position {
        Position::new(self.last_at_ms, self.last_id.clone())
    }

    /// Where the next page of this walk starts.
    pub fn walk(&self) -> Walk {
        Walk {
            after: Some(self.position()),
            rev: Some(self.walk_rev),
        }
    }
}

/// Where a page of a keyset walk starts (docs/contract/read-api.md "Pagination"): after the previous page's last
/// position, in the walk that began at the store's walk revision `rev`.
///
/// A record's time can move during a walk (a late event with an earlier time moves a session's
/// start). The store counts the transactions that move records in a walk revision, one per
/// site and mode, and keeps where each moved record stood; a walk is over the positions records
/// had at its first page: a record moved after `rev` is walked at the position it left then.
/// So each position is fixed for the walk's life, and each record comes once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// The previous page's last position; `None` on the first page.
    pub after: Option<Position>,
    /// The walk revision of the walk's first page; `None` on the first page (the page read
    /// fixes it).
    pub rev: Option<i64>,
}

/// A page of a keyset walk: the records in walk order, where each stands in the walk, and the
/// walk revision the next page's cursor carries. A position is made only when asked for
/// ([`WalkPage::last_position`]: the cursor needs the last one), not one per record.
#[derive(Clone, Debug)]
pub struct WalkPage<T> {
    /// The records, in walk order (newest position first).
    pub rows: Vec<T>,
    /// Each record's time in the walk (Unix ms), when the page was read after records moved;
    /// empty when every record stands at its own time.
    walk_times_ms: Vec<i64>,
    /// A record's own position: its time (Unix ms) and id.
    own: fn(&T) -> (i64, &str),
    /// The walk revision of the walk's first page.
    pub rev: i64,
}

impl<T> WalkPage<T> {
    /// A page whose records stand at their own positions (`own`).
    pub fn at_own_positions(rows: Vec<T>, rev: i64, own: fn(&T) -> (i64, &str)) -> Self {
        WalkPage {
            rows,
            walk_times_ms: Vec::new(),
            own,
            rev,
        }
    }

    /// A page whose records stand at the walk times read with them (Unix ms), each with its
    /// own id (`own`'s).
    pub fn at_walk_times(rows: Vec<(T, i64)>, rev: i64, own: fn(&T) -> (i64, &str)) -> Self {
        let (rows, walk_times_ms) = rows.into_iter().unzip();
        WalkPage {
            rows,
            walk_times_ms,
            own,
            rev,
        }
    }

    /// Keeps the first `len` records.
    pub fn truncate(&mut self, len: usize) {
        self.rows.truncate(len);
        self.walk_times_ms.truncate(len);
    }

    /// Where the page's last record stands in the walk (the next page starts after it);
    /// `None` for an empty page.
    pub fn last_position(&self) -> Option<Position> {
        let (own_at_ms, id) = (self.own)(self.rows.last()?);
        let at_ms = self.walk_times_ms.last().copied().unwrap_or(own_at_ms);
        Some(Position::new(at_ms, id))
    }
}

/// A place in a keyset walk (docs/contract/read-api.md "Pagination"; the backtest's walk too): a record's time,
/// Unix milliseconds, and its id, the order every list is walked in. The one type between the
/// cursor, the page and the backtest; the store binds it as a row value ([`Position::as_key`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The record's time (a session's start, a nudge's `shown_at`), Unix milliseconds.
    pub at_ms: i64,
    /// The record's id.
    pub id: String,
}

impl Position {
    /// The position of the record at `at_ms` with `id`.
    pub fn new(at_ms: i64, id: impl Into<String>) -> Position {
        Position {
            at_ms,
            id: id.into(),
        }
    }

    /// `(at_ms, id)`, as the store's keyset queries take it.
    pub fn as_key(&self) -> (i64, &str) {
        (self.at_ms, self.id.as_str())
    }
}

/// The filter parameters of a list request, as given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FiltersWire", into = "FiltersWire")]
pub struct Filters {
    /// `from`, parsed, to the nanosecond.
    pub from: Option<ExactTime>,
    /// `to`, parsed, to the nanosecond.
    pub to: Option<ExactTime>,
    /// `session_id` (GET /v1/nudges).
    pub session_id: Option<String>,
    /// `type` (GET /v1/nudges).
    pub nudge_type: Option<NudgeType>,
}

/// [`Filters`] in a cursor: `from` and `to` as Unix milliseconds (`f`, `t`, as cursors have
/// always carried them) and the nanoseconds past them when there are any (`fn`, `tn`).
#[derive(Clone, Default, Serialize, Deserialize)]
struct FiltersWire {
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    from_ms: Option<i64>,
    #[serde(rename = "fn", default, skip_serializing_if = "Option::is_none")]
    from_sub_ms_ns: Option<u32>,
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    to_ms: Option<i64>,
    #[serde(rename = "tn", default, skip_serializing_if = "Option::is_none")]
    to_sub_ms_ns: Option<u32>,
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(rename = "y", default, skip_serializing_if = "Option::is_none")]
    nudge_type: Option<String>,
}

impl From<Filters> for FiltersWire {
    fn from(f: Filters) -> FiltersWire {
        let sub = |t: Option<ExactTime>| t.map(|t| t.sub_ms_ns).filter(|&ns| ns != 0);
        FiltersWire {
            from_ms: f.from.map(|t| t.ms),
            from_sub_ms_ns: sub(f.from),
            to_ms: f.to.map(|t| t.ms),
            to_sub_ms_ns: sub(f.to),
            session_id: f.session_id,
            nudge_type: f.nudge_type.map(|t| t.as_str().to_owned()),
        }
    }
}

impl TryFrom<FiltersWire> for Filters {
    type Error = String;

    fn try_from(w: FiltersWire) -> Result<Filters, String> {
        let exact = |ms: Option<i64>, sub: Option<u32>| {
            ms.map(|ms| ExactTime {
                ms,
                sub_ms_ns: sub.unwrap_or(0),
            })
        };
        let nudge_type = match w.nudge_type {
            None => None,
            Some(text) => {
                Some(NudgeType::from_wire(&text).ok_or_else(|| format!("unknown type {text:?}"))?)
            }
        };
        Ok(Filters {
            from: exact(w.from_ms, w.from_sub_ms_ns),
            to: exact(w.to_ms, w.to_sub_ms_ns),
            session_id: w.session_id,
            nudge_type,
        })
    }
}

impl Filters {
    /// The name of the first filter given in `self` (a request) with a value other than the
    /// cursor's; `None` when every given one agrees.
    pub fn first_conflict(&self, cursor: &Filters) -> Option<&'static str> {
        fn differs<T: PartialEq>(given: &Option<T>, carried: &Option<T>) -> bool {
            given.is_some() && given != carried
        }
        if differs(&self.from, &cursor.from) {
            Some("from")
        } else if differs(&self.to, &cursor.to) {
            Some("to")
        } else if differs(&self.session_id, &cursor.session_id) {
            Some("session_id")
        } else if differs(&self.nudge_type, &cursor.nudge_type) {
            Some("type")
        } else {
            None
        }
    }
}

/// The server's cursor key: the same on every instance (`--secret-file`).
#[derive(Clone)]
pub struct CursorKey {
    secret: Vec<u8>,
}

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

impl CursorKey {
    /// A key from a secret of at least [`MIN_SECRET_BYTES`] bytes.
    ///
    /// # Errors
    ///
    /// A message when the secret is shorter.
    pub fn new(secret: &[u8]) -> Result<CursorKey, String> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "the cursor secret has {} bytes; at least {MIN_SECRET_BYTES} are needed (for example: head -c 32 /dev/urandom | base64 > secret)",
                secret.len()
            ));
        }
        Ok(CursorKey {
            secret: secret.to_vec(),
        })
    }

    /// A random key (cursors then do not survive a restart or cross instances).
    ///
    /// # Errors
    ///
    /// The system's random source failed.
    pub fn random() -> Result<CursorKey, String> {
        let mut secret = [0u8; MIN_SECRET_BYTES];
        getrandom::fill(&mut secret).map_err(|e| format!("no random source: {e}"))?;
        CursorKey::new(&secret)
    }

    fn mac(&self, endpoint: Endpoint, scope: &Scope, payload: &[u8]) -> Hmac<Sha256> {
        // HMAC accepts a key of any length.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable_hmac());
        for part in [
            endpoint.tag().as_bytes(),
            scope.site.as_bytes(),
            scope.mode.as_str().as_bytes(),
        ] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.update(payload);
        mac
    }

    /// The cursor of `state` for `endpoint` and `scope`.
    pub fn sign(&self, endpoint: Endpoint, scope: &Scope, state: &CursorState) -> String {
        let payload = serde_json::to_vec(state).unwrap_or_default();
        let tag = self.mac(endpoint, scope, &payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The state of a cursor this server signed for `endpoint` and `scope`.
    ///
    /// # Errors
    ///
    /// A message saying why the cursor is not one: too long, not of the form, a signature that
    /// does not verify (damaged, another secret, endpoint, site or mode).
    pub fn verify(
        &self,
        endpoint: Endpoint,
        scope: &Scope,
        cursor: &str,
    ) -> Result<CursorState, &'static str> {
        if cursor.len() > MAX_CURSOR_BYTES {
            return Err("the cursor is longer than any this server writes");
        }
        let (payload, tag) = cursor
            .split_once('.')
            .ok_or("the cursor is not one this server wrote")?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| "the cursor is not one this server wrote")?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| "the cursor is not one this server wrote")?;
        self.mac(endpoint, scope, &payload)
            .verify_slice(&tag)
            .map_err(
                |_| "the cursor was damaged, or was issued for another list, site, mode or server",
            )?;
        serde_json::from_slice(&payload).map_err(|_| "the cursor is not one this server wrote")
    }
}

#[cold]
fn unreachable_hmac() -> Hmac<Sha256> {
    // `new_from_slice` fails only for fixed-size keys, which HMAC does not have; fall back to
    // a fixed key that verifies nothing this server signed.
    Hmac::<Sha256>::new(&Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::Mode;

    fn scope(site: &str, mode: Mode) -> Scope {
        Scope {
            site: site.into(),
            mode,
        }
    }

    fn state() -> CursorState {
        CursorState {
            from_ms: 1,
            to_ms: 2,
            filters: Filters {
                session_id: Some(format!("sess_{}", "x".repeat(64))),
                nudge_type: Some(NudgeType::StickyBar),
                from: Some(ExactTime {
                    ms: i64::MIN,
                    sub_ms_ns: 999_999,
                }),
                to: Some(ExactTime {
                    ms: i64::MIN,
                    sub_ms_ns: 999_999,
                }),
            },
            last_at_ms: i64::MIN,
            last_id: format!("nudg_{}", "y".repeat(64)),
            walk_rev: i64::MAX,
        }
    }

    #[test]
    fn round_trip_and_binding() {
        let key = CursorKey::new(&[7; 32]).unwrap();
        let a = scope(&"s".repeat(64), Mode::Test);
        let cursor = key.sign(Endpoint::Nudges, &a, &state());
        assert!(cursor.len() <= MAX_CURSOR_BYTES, "{}", cursor.len());
        assert!(
            cursor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        );
        assert_eq!(key.verify(Endpoint::Nudges, &a, &cursor), Ok(state()));
        assert!(key.verify(Endpoint::Sessions, &a, &cursor).is_err());
        assert!(
            key.verify(
                Endpoint::Nudges,
                &scope(&"s".repeat(64), Mode::Live),
                &cursor
            )
            .is_err()
        );
        assert!(
            key.verify(Endpoint::Nudges, &scope("other", Mode::Test), &cursor)
                .is_err()
        );
        let other = CursorKey::new(&[8; 32]).unwrap();
        assert!(other.verify(Endpoint::Nudges, &a, &cursor).is_err());
        let mut damaged = cursor.clone().into_bytes();
        damaged[3] ^= 1;
        assert!(
            key.verify(Endpoint::Nudges, &a, &String::from_utf8(damaged).unwrap())
                .is_err()
        );
        assert!(key.verify(Endpoint::Nudges, &a, "").is_err());
        assert!(key.verify(Endpoint::Nudges, &a, &"a".repeat(600)).is_err());
        assert!(CursorKey::new(b"short").is_err());
    }

    #[test]
    fn filters_may_be_omitted_not_changed() {
        let carried = Filters {
            from: Some(ExactTime::from_ms(5)),
            nudge_type: Some(NudgeType::Toast),
            ..Filters::default()
        };
        assert_eq!(Filters::default().first_conflict(&carried), None);
        assert_eq!(carried.first_conflict(&carried), None);
        let changed = Filters {
            nudge_type: Some(NudgeType::ExitModal),
            ..Filters::default()
        };
        assert_eq!(changed.first_conflict(&carried), Some("type"));
        let added = Filters {
            session_id: Some("sess_a".into()),
            ..Filters::default()
        };
        assert_eq!(added.first_conflict(&carried), Some("session_id"));
        // Times compare to the nanosecond: another one in the same millisecond differs.
        let finer = Filters {
            from: Some(ExactTime {
                ms: 5,
                sub_ms_ns: 1,
            }),
            ..Filters::default()
        };
        assert_eq!(finer.first_conflict(&carried), Some("from"));
        assert_eq!(finer.first_conflict(&finer.clone()), None);
    }

    #[test]
    fn sub_millisecond_filters_round_trip_and_older_cursors_still_read() {
        let key = CursorKey::new(&[7; 32]).unwrap();
        let a = scope("shop", Mode::Test);
        let mut state = state();
        state.filters.to = Some(ExactTime::from_ms(42));
        let cursor = key.sign(Endpoint::Sessions, &a, &state);
        assert_eq!(key.verify(Endpoint::Sessions, &a, &cursor), Ok(state));
        // A payload of before sub-millisecond times: `f` and `t` in milliseconds alone.
        let old = br#"{"f":1,"t":2,"g":{"f":5,"t":9},"a":3,"i":"sess_x"}"#;
        let tag = key.mac(Endpoint::Sessions, &a, old).finalize().into_bytes();
        let cursor = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(old),
            URL_SAFE_NO_PAD.encode(tag)
        );
        let read = key.verify(Endpoint::Sessions, &a, &cursor).unwrap();
        assert_eq!(read.filters.from, Some(ExactTime::from_ms(5)));
        assert_eq!(read.filters.to, Some(ExactTime::from_ms(9)));
        // A whole millisecond is written as before: no `fn`/`tn`.
        let whole = Filters {
            from: Some(ExactTime::from_ms(5)),
            ..Filters::default()
        };
        assert_eq!(serde_json::to_string(&whole).unwrap(), r#"{"f":5}"#);
    }
}
