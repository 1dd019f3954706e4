//! Query parameters of the read endpoints (docs/contract/read-api.md "Parameters"): each known once, none
//! unknown, each value checked and named with its value when refused, never coerced. Each
//! route takes its parameters as one typed extractor ([`SessionsQuery`], [`NudgesQuery`],
//! [`WindowQuery`], [`KeysetQuery`], [`NoQuery`]), read in the order its fields are checked.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use nudge_rules::NudgeType;

use crate::domain::ids::is_session_id;
use crate::domain::time::{ExactTime, MAX_MS, MIN_MS, parse_rfc3339_exact};
use crate::http::error::ApiError;

/// `limit` when absent (API document 4.1, 4.3).
pub const DEFAULT_LIMIT: u32 = 50;
/// The largest `limit`.
pub const MAX_LIMIT: u32 = 200;

/// The parameters of one request, by name; each at most once.
#[derive(Debug, Default)]
pub struct Params {
    pairs: Vec<(String, String)>,
}

/// How much of a refused value a message shows.
const SHOWN_CHARS: usize = 80;

fn shown(value: &str) -> String {
    let cut: String = value.chars().take(SHOWN_CHARS).collect();
    if cut.len() < value.len() {
        format!("{cut:?}...")
    } else {
        format!("{cut:?}")
    }
}

impl Params {
    /// Reads the query string (`None`: no `?`), refusing names outside `allowed` and names
    /// given twice.
    ///
    /// # Errors
    ///
    /// 400 InvalidRequest naming the parameter.
    pub fn parse(query: Option<&str>, allowed: &[&str]) -> Result<Params, ApiError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            if !allowed.contains(&name.as_ref()) {
                let expected = allowed.join(", ");
                return Err(ApiError::InvalidRequest(format!(
                    "unknown query parameter {}; this endpoint takes {expected}",
                    shown(&name)
                )));
            }
            if pairs.iter().any(|(n, _)| *n == name) {
                return Err(ApiError::InvalidRequest(format!(
                    "query parameter {name} is given more than once; give it once"
                )));
            }
            pairs.push((name.into_owned(), value.into_owned()));
        }
        Ok(Params { pairs })
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `limit`: 1 to 200, default 50.
    ///
    /// # Errors
    ///
    /// 400 naming `limit` and the value: not digits, a leading zero, out of range.
    pub fn limit(&self) -> Result<u32, ApiError> {
        let Some(text) = self.get("limit") else {
            return Ok(DEFAULT_LIMIT);
        };
        let canonical = !text.is_empty()
            && text.len() <= 3
            && text.bytes().all(|b| b.is_ascii_digit())
            && !text.starts_with('0');
        match text.parse::<u32>() {
            Ok(n) if canonical && (1..=MAX_LIMIT).contains(&n) => Ok(n),
            _ => Err(ApiError::InvalidRequest(format!(
                "limit must be an integer from 1 to {MAX_LIMIT}, got {}",
                shown(text)
            ))),
        }
    }

    /// `from` or `to` (`name`), exactly as given (up to nine fraction digits), if given.
    ///
    /// # Errors
    ///
    /// 400 naming the parameter and the value: not RFC 3339, more than nine fraction digits,
    /// a date that does not exist.
    pub fn time(&self, name: &str) -> Result<Option<ExactTime>, ApiError> {
        let Some(text) = self.get(name) else {
            return Ok(None);
        };
        read_time(name, text).map(Some)
    }

    /// `type`: one of the four nudge types, if given.
    ///
    /// # Errors
    ///
    /// 400 naming `type` and the value.
    pub fn nudge_type(&self) -> Result<Option<NudgeType>, ApiError> {
        match self.get("type") {
            None => Ok(None),
            Some(t) => NudgeType::from_wire(t).map(Some).ok_or_else(|| {
                ApiError::InvalidRequest(format!(
                    "type must be one of chat_bubble, toast, exit_modal, sticky_bar, got {}",
                    shown(t)
                ))
            }),
        }
    }

    /// `session_id`: a well-formed session id, if given.
    ///
    /// # Errors
    ///
    /// 400 naming `session_id` and the value.
    pub fn session_id(&self) -> Result<Option<String>, ApiError> {
        match self.get("session_id") {
            None => Ok(None),
            Some(id) if is_session_id(id) => Ok(Some(id.to_owned())),
            Some(id) => Err(ApiError::InvalidRequest(format!(
                "session_id must be sess_ followed by 1 to 64 of A-Z a-z 0-9 _ -, got {}",
                shown(id)
            ))),
        }
    }
}

/// The parameters of a list with a time window: `limit`, `from`, `to` (checked in that
/// order) and `cursor` (verified with the list's endpoint and the caller's scope later).
#[derive(Debug)]
pub struct ListQuery {
    /// `limit`, 1 to 200, default 50.
    pub limit: u32,
    /// `from`, exactly as given.
    pub from: Option<ExactTime>,
    /// `to`, exactly as given.
    pub to: Option<ExactTime>,
    /// `cursor`, as given.
    pub cursor: Option<String>,
}

impl ListQuery {
    fn read(params: &Params) -> Result<ListQuery, ApiError> {
        Ok(ListQuery {
            limit: params.limit()?,
            from: params.time("from")?,
            to: params.time("to")?,
            cursor: params.get("cursor").map(str::to_owned),
        })
    }
}

/// `GET /v1/sessions`: `from`, `to`, `limit`, `cursor`.
#[derive(Debug)]
pub struct SessionsQuery(pub ListQuery);

/// `GET /v1/nudges`: `session_id` and `type` (checked first), then the list's parameters.
#[derive(Debug)]
pub struct NudgesQuery {
    /// `session_id`, well formed.
    pub session_id: Option<String>,
    /// `type`, one of the four nudge types.
    pub nudge_type: Option<NudgeType>,
    /// `from`, `to`, `limit`, `cursor`.
    pub list: ListQuery,
}

/// A window with no list: `from` and `to` (the uplift report).
#[derive(Debug)]
pub struct WindowQuery {
    /// `from`, exactly as given.
    pub from: Option<ExactTime>,
    /// `to`, exactly as given.
    pub to: Option<ExactTime>,
}

/// A plain keyset list (config versions, webhook endpoints and attempts): `limit`, `cursor`.
#[derive(Debug)]
pub struct KeysetQuery {
    /// `limit`, 1 to 200, default 50.
    pub limit: u32,
    /// `cursor`, as given.
    pub cursor: Option<String>,
}

/// No parameters at all (a record's detail).
#[derive(Debug)]
pub struct NoQuery;

/// A query extractor: the names a route takes, and how its values are read.
trait QueryForm: Sized {
    /// The parameters the route takes (the 400 for another names them).
    const NAMES: &'static [&'static str];
    /// Reads the values, each checked in the route's order.
    fn read(params: &Params) -> Result<Self, ApiError>;
}

impl QueryForm for SessionsQuery {
    const NAMES: &'static [&'static str] = &["from", "to", "limit", "cursor"];
    fn read(params: &Params) -> Result<Self, ApiError> {
        ListQuery::read(params).map(SessionsQuery)
    }
}

impl QueryForm for NudgesQuery {
    const NAMES: &'static [&'static str] = &["session_id", "type", "from", "to", "limit", "cursor"];
    fn read(params: &Params) -> Result<Self, ApiError> {
        Ok(NudgesQuery {
            session_id: params.session_id()?,
            nudge_type: params.nudge_type()?,
            list: ListQuery::read(params)?,
        })
    }
}

impl QueryForm for WindowQuery {
    const NAMES: &'static [&'static str] = &["from", "to"];
    fn read(params: &Params) -> Result<Self, ApiError> {
        Ok(WindowQuery {
            from: params.time("from")?,
            to: params.time("to")?,
        })
    }
}

impl QueryForm for KeysetQuery {
    const NAMES: &'static [&'static str] = &["limit", "cursor"];
    fn read(params: &Params) -> Result<Self, ApiError> {
        Ok(KeysetQuery {
            limit: params.limit()?,
            cursor: params.get("cursor").map(str::to_owned),
        })
    }
}

impl QueryForm for NoQuery {
    const NAMES: &'static [&'static str] = &[];
    fn read(_: &Params) -> Result<Self, ApiError> {
        Ok(NoQuery)
    }
}

/// Each query form as an extractor: unknown or repeated names, then the values (400).
macro_rules! query_extractor {
    ($($form:ty),*) => {$(
        impl<S: Send + Sync> FromRequestParts<S> for $form {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
                let params = Params::parse(parts.uri.query(), <$form as QueryForm>::NAMES)?;
                <$form as QueryForm>::read(&params)
            }
        }
    )*};
}

query_extractor!(
    SessionsQuery,
    NudgesQuery,
    WindowQuery,
    KeysetQuery,
    NoQuery
);

/// A `from` or `to` (`name`) of the read API or the backtest, exactly (docs/contract/read-api.md "Parameters": RFC
/// 3339, up to nine fraction digits).
///
/// # Errors
///
/// 400 naming the parameter and the value.
pub fn read_time(name: &str, text: &str) -> Result<ExactTime, ApiError> {
    parse_rfc3339_exact(text)
        .map_err(|e| ApiError::InvalidRequest(format!("{name} must be {e}, got {}", shown(text))))
        .and_then(|t| {
            if (MIN_MS..=MAX_MS).contains(&t.ms) {
                Ok(t)
            } else {
                Err(ApiError::InvalidRequest(format!(
                    "{name} is out of range, got {}",
                    shown(text)
                )))
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::is_nudge_id;

    fn params(q: &str) -> Result<Params, ApiError> {
        Params::parse(
            Some(q),
            &["from", "to", "limit", "cursor", "type", "session_id"],
        )
    }

    #[test]
    fn limits_are_checked_never_coerced() {
        assert_eq!(params("").unwrap().limit().unwrap(), 50);
        assert_eq!(params("limit=200").unwrap().limit().unwrap(), 200);
        assert_eq!(params("limit=1").unwrap().limit().unwrap(), 1);
        for bad in [
            "0",
            "201",
            "abc",
            "",
            "05",
            "+5",
            "5.0",
            "-1",
            "1e2",
            "%205",
            "99999999999",
        ] {
            let err = params(&format!("limit={bad}"))
                .unwrap()
                .limit()
                .unwrap_err();
            let ApiError::InvalidRequest(message) = err else {
                panic!()
            };
            assert!(message.starts_with("limit must be"), "{message}");
        }
    }

    #[test]
    fn unknown_and_repeated_parameters_are_named() {
        let ApiError::InvalidRequest(m) = params("limt=5").unwrap_err() else {
            panic!()
        };
        assert!(m.contains("\"limt\""), "{m}");
        let ApiError::InvalidRequest(m) = params("limit=5&limit=6").unwrap_err() else {
            panic!()
        };
        assert!(m.contains("limit is given more than once"), "{m}");
    }

    #[test]
    fn ids_and_types() {
        assert!(is_session_id("sess_a-b_C9"));
        assert!(!is_session_id("sess_"));
        assert!(!is_session_id(&format!("sess_{}", "a".repeat(65))));
        assert!(!is_session_id("sess_a'b"));
        assert!(is_nudge_id("nudg_1"));
        assert!(params("type=popup").unwrap().nudge_type().is_err());
        assert_eq!(
            params("type=toast").unwrap().nudge_type().unwrap(),
            Some(NudgeType::Toast)
        );
        assert!(params("session_id=x").unwrap().session_id().is_err());
        assert!(
            params("from=2026-02-30T00:00:00Z")
                .unwrap()
                .time("from")
                .is_err()
        );
    }

    #[test]
    fn times_take_nine_fraction_digits_exactly() {
        let time = |q: &str| params(q).unwrap().time("from");
        let t = time("from=2026-11-24T10:00:00.123456789Z")
            .unwrap()
            .unwrap();
        assert_eq!(t.sub_ms_ns, 456_789);
        assert_eq!(t.ceil_ms(), t.ms + 1);
        assert_eq!(t.to_string(), "2026-11-24T10:00:00.123456789Z");
        let whole = time("from=2026-11-24T10:00:00.123000Z").unwrap().unwrap();
        assert_eq!(whole, ExactTime::from_ms(t.ms));
        assert_eq!(whole.ceil_ms(), t.ms);
        assert_eq!(
            time("from=2026-11-24T11:00:00.1234%2B01:00").unwrap(),
            Some(ExactTime {
                ms: t.ms,
                sub_ms_ns: 400_000
            })
        );
        let ApiError::InvalidRequest(m) = time("from=2026-11-24T10:00:00.1234567891Z").unwrap_err()
        else {
            panic!()
        };
        assert!(m.starts_with("from must be"), "{m}");
        assert!(m.contains("nine fraction digits"), "{m}");
    }
}
