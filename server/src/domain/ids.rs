//! The identifiers the API reads (docs/contract/relay.md): session and nudge ids, and the page key a URL is
//! counted under (docs/contract/read-api.md).

/// The page key `page_count` counts (docs/contract/read-api.md): the canonical path, or the exact text of a URL
/// docs/contract/urls.md rejects.
pub fn path_key(url: &str, case_sensitive: bool) -> String {
    match nudge_rules::normalize_page_url(url, case_sensitive) {
        Ok(path) => path.into_owned(),
        Err(_) => url.to_owned(),
    }
}

/// `sess_` then 1 to 64 of `[A-Za-z0-9_-]` (docs/contract/relay.md).
pub fn is_session_id(text: &str) -> bool {
    is_prefixed_id(text, "sess_")
}

/// `nudg_` then 1 to 64 of `[A-Za-z0-9_-]` (docs/contract/relay.md).
pub fn is_nudge_id(text: &str) -> bool {
    is_prefixed_id(text, "nudg_")
}

fn is_prefixed_id(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix).is_some_and(|rest| {
        (1..=64).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}
