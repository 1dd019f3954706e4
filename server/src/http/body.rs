//! Reading a request's body: the media type (415), the size (413), the time (408), and the
//! JSON rules every body shares.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tower_http::timeout::TimeoutError;

use crate::http::error::ApiError;
use crate::http::pipeline::ApiOptions;

/// The whole body, at most `max_bytes`: refused on its `Content-Length` before a byte is read,
/// or as soon as a chunked body passes the limit; cut after `total_timeout` however slowly it
/// trickles.
pub(crate) async fn read_body(
    request: Request,
    max_bytes: usize,
    total_timeout: Duration,
) -> Result<Bytes, ApiError> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&n| n > max_bytes as u64) {
        return Err(ApiError::PayloadTooLarge(format!(
            "the request body has {length} bytes; at most {max_bytes} ({}) are allowed",
            kib(max_bytes)
        )));
    }
    let limited = Limited::new(request.into_body(), max_bytes);
    let Ok(collected) = tokio::time::timeout(total_timeout, limited.collect()).await else {
        return Err(ApiError::RequestTimeout(format!(
            "the request body did not arrive within {} ms",
            total_timeout.as_millis()
        )));
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if caused_by::<LengthLimitError>(e.as_ref()) => {
            Err(ApiError::PayloadTooLarge(format!(
                "the request body is larger than {max_bytes} bytes ({}), the most allowed",
                kib(max_bytes)
            )))
        }
        Err(e) if caused_by::<TimeoutError>(e.as_ref()) => Err(ApiError::RequestTimeout(
            "the request body did not arrive in time".to_owned(),
        )),
        Err(_) => Err(ApiError::InvalidRequest(
            "the request body could not be read".to_owned(),
        )),
    }
}

/// Whether `error` or any error in its source chain is a `T`.
fn caused_by<T: std::error::Error + 'static>(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<T>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// `64 KiB`.
fn kib(bytes: usize) -> String {
    format!("{} KiB", bytes / 1024)
}

/// Refuses a field given as `null` in a JSON object body: an optional field is left out, never
/// `null` (which serde would read as absent: a silent default).
///
/// # Errors
///
/// 400 naming the first such field.
pub(crate) fn refuse_nulls(body: &[u8]) -> Result<(), ApiError> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice::<serde_json::Value>(body)
    else {
        return Ok(());
    };
    match fields.iter().find(|(_, v)| v.is_null()) {
        Some((name, _)) => Err(ApiError::InvalidRequest(format!(
            "{name} is null; leave an optional field out rather than sending null"
        ))),
        None => Ok(()),
    }
}

/// The body of a POST route that takes JSON: one `Content-Type: application/json` (415), at
/// most `max_bytes` (413), in time (408).
pub(crate) async fn read_json_body(
    request: Request,
    max_bytes: usize,
    options: &ApiOptions,
) -> Result<Bytes, ApiError> {
    check_content_type(request.headers())?;
    read_body(request, max_bytes, options.body_total_timeout).await
}

/// 415 unless there is one `Content-Type` and its media type is `application/json`
/// (parameters such as `charset` allowed).
pub(crate) fn check_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(ApiError::UnsupportedMediaType(
            "the request has more than one Content-Type header; send one: Content-Type: application/json".to_owned(),
        ));
    }
    let content_type = first.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let media_type = content_type
        .as_deref()
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    if media_type.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
        return Ok(());
    }
    let shown = match &content_type {
        None => "no Content-Type".to_owned(),
        Some(v) => format!("Content-Type {:?}", v.chars().take(100).collect::<String>()),
    };
    Err(ApiError::UnsupportedMediaType(format!(
        "the request body must be JSON with Content-Type: application/json; got {shown}"
    )))
}

/// 415 unless there is one `Content-Type`, `application/json` or `text/plain` (what
/// `navigator.sendBeacon` sends a string as), parameters allowed: the relay's batch.
pub(crate) fn check_batch_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let first = values.next();
    let media_type = first
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    let ok = values.next().is_none()
        && media_type.is_some_and(|m| {
            m.eq_ignore_ascii_case("application/json") || m.eq_ignore_ascii_case("text/plain")
        });
    if ok {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType(
            "send the batch as JSON with one Content-Type: application/json or text/plain"
                .to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    use crate::http::test_headers as headers;

    #[test]
    fn content_types() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(
                check_content_type(&headers(&[("content-type", ok)])).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "text/plain",
            "application/json-seq",
            "application/x-www-form-urlencoded",
            "",
        ] {
            assert!(
                check_content_type(&headers(&[("content-type", bad)])).is_err(),
                "{bad}"
            );
        }
        assert!(check_content_type(&headers(&[])).is_err());
        let two = headers(&[
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
        ]);
        assert!(check_content_type(&two).is_err());
    }
}
