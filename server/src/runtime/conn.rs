//! What every accepted connection goes through before hyper parses it: a bound on how many are
//! open at once, and an I/O wrapper that gives hyper's own error answers (400, 414, 431, which
//! hyper writes with an empty body when a request head cannot be parsed or is too large) the
//! API's `{"error", "message"}` body.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The most bytes a request head may take (hyper's read buffer): 16 KiB is plenty for this API
/// and bounds what an unfinished head holds (docs/contract/server.md hardening).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// The answer to a connection over the limit, written without reading the request.
pub const OVER_CONNECTION_LIMIT: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 100\r\n\r\n{\"error\":\"ServiceUnavailable\",\"message\":\"too many open connections; retry in 1 second on a new one\"}";

/// A stream whose writes are watched for hyper's bodiless error answers, which are replaced by
/// the same status with a JSON error body.
pub struct JsonErrors<S> {
    inner: S,
    /// A replacement being written: the bytes, how many are written, and how many bytes of
    /// hyper's buffer it stands for.
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<S> JsonErrors<S> {
    /// Wraps a stream.
    pub fn new(inner: S) -> JsonErrors<S> {
        JsonErrors {
            inner,
            pending: None,
        }
    }
}

/// The replacement of a response head that hyper wrote for a request it could not parse, or
/// `None` when `buf` is not one: status 400, 414 or 431, `content-length: 0`, no content type
/// (every answer of the API's own has a JSON body).
fn replacement(buf: &[u8]) -> Option<Vec<u8>> {
    let head = std::str::from_utf8(buf).ok()?;
    let rest = head.strip_prefix("HTTP/1.1 ")?;
    let (name, message) = match rest.get(..3)? {
        "400" => ("InvalidRequest", "the request is not valid HTTP/1.1"),
        "414" => ("InvalidRequest", "the request target is too long"),
        "431" => (
            "InvalidRequest",
            "the request head is too large; at most 16 KiB of request line and headers are read",
        ),
        _ => return None,
    };
    let end = head.find("\r\n\r\n")?;
    if end + 4 != head.len() {
        return None;
    }
    let lower = head.to_ascii_lowercase();
    if !lower.contains("\r\ncontent-length: 0\r\n") || lower.contains("\r\ncontent-type:") {
        return None;
    }
    let body = serde_json::json!({ "error": name, "message": message }).to_string();
    let mut out = String::with_capacity(head.len() + body.len() + 64);
    for (i, line) in head.get(..end)?.split("\r\n").enumerate() {
        if i > 0 && line.to_ascii_lowercase().starts_with("content-length:") {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
        if i == 0 {
            out.push_str("content-type: application/json\r\n");
        }
    }
    out.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    Some(out.into_bytes())
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonErrors<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.pending.is_none() {
            if buf.starts_with(b"HTTP/1.1 4")
                && let Some(bytes) = replacement(buf)
            {
                this.pending = Some((bytes, 0, buf.len()));
            }
            if this.pending.is_none() {
                return Pin::new(&mut this.inner).poll_write(cx, buf);
            }
        }
        while let Some((bytes, written, stands_for)) = &mut this.pending {
            let rest = bytes.get(*written..).unwrap_or_default();
            if rest.is_empty() {
                let n = *stands_for;
                this.pending = None;
                return Poll::Ready(Ok(n));
            }
            match Pin::new(&mut this.inner).poll_write(cx, rest) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(0))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    // Not vectored: hyper then writes each response as one buffer, so a head is seen whole.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bodiless_errors_get_a_json_body() {
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Tue, 24 Nov 2026 16:40:49 GMT\r\n\r\n";
        let out = String::from_utf8(replacement(head).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\nconnection: close\r\n"), "{head}");
        assert!(
            head.ends_with(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"], "InvalidRequest");
        // The API's own answers are left alone.
        assert!(replacement(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(replacement(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(replacement(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}").is_none());
        let over = std::str::from_utf8(OVER_CONNECTION_LIMIT).unwrap();
        let (h, b) = over.split_once("\r\n\r\n").unwrap();
        assert!(h.ends_with(&format!("content-length: {}", b.len())));
        serde_json::from_str::<serde_json::Value>(b).unwrap();
    }
}
