//! The authority of an absolute page URL (docs/contract/urls.md step 1): host, port and user info are ignored,
//! but a URL that the WHATWG URL parser rejects is rejected, since no browser can be on it
//! (`http://h:99999/x`, `http://a<b/x`).
//!
//! The port and an empty host are checked here, with messages that say what is wrong; the rest is
//! the WHATWG parser's verdict: natively the `url` crate (feature `url`, on by default), in the
//! WASM package the platform's own `URL` (`platform`, below), which keeps `url` and its IDNA
//! tables out of the `.wasm`. The messages do not depend on which parser ran, so native and WASM
//! answers are byte for byte alike (pkg/test/parity.test.mjs).

#[cfg(not(any(feature = "url", feature = "wasm")))]
compile_error!(
    "nudge-rules needs a WHATWG URL parser: enable the `url` feature (default), or `wasm` in a \
     browser or Node"
);

/// Checks the authority (`user@host:port`, the text between `//` and the path) of the absolute
/// http(s) URL `page_url`.
///
/// # Errors
///
/// - What is wrong, for the message of `UrlError::MalformedUrl`: an empty host; a port that is not
///   a number from 0 to 65535; a host the WHATWG URL parser rejects.
pub(crate) fn check_authority(page_url: &str, authority: &str) -> Result<(), String> {
    let host_and_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, after)| after);
    let (host, port) = match host_and_port.strip_prefix('[') {
        // An IPv6 address: the port, if any, follows the `]`.
        Some(_) => match host_and_port.find(']') {
            Some(end) => {
                let (host, rest) = host_and_port.split_at(end + 1);
                (host, rest.strip_prefix(':'))
            }
            None => (host_and_port, None),
        },
        None => match host_and_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_and_port, None),
        },
    };
    if host.is_empty() {
        return Err("the host is empty".to_owned());
    }
    if let Some(port) = port.filter(|p| !p.is_empty()) {
        let in_range = port.bytes().all(|b| b.is_ascii_digit())
            && port.trim_start_matches('0').len() <= 5
            && port.parse::<u32>().is_ok_and(|n| n <= 65_535);
        if !in_range {
            return Err(msg!("the port {port:?} is not a number from 0 to 65535"));
        }
    }
    if whatwg_accepts(page_url) {
        Ok(())
    } else {
        Err(msg!(
            "the host {host:?} is not valid: the WHATWG URL parser rejects it"
        ))
    }
}

/// The WHATWG URL parser's verdict on an absolute URL: the `url` crate.
#[cfg(feature = "url")]
fn whatwg_accepts(url: &str) -> bool {
    url::Url::parse(url).is_ok()
}

/// The platform's WHATWG URL parser, for builds without the `url` feature (the WASM package).
///
/// Read from the page's `URL`, never written to it: the storefront runtime is a guest on a
/// shop's page and writes none of its globals (docs/contract/storefront.md). `URL.canParse` where
/// the platform has it; where it predates it (Chrome 120, Firefox 115, Safari 17, Node 18.17),
/// whether `new URL(url)` succeeds, the same verdict.
#[cfg(not(feature = "url"))]
mod platform {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        /// The platform's `URL` class.
        #[wasm_bindgen(js_name = URL)]
        type PlatformUrl;

        /// `URL.canParse(url)`; an error where the platform has no `URL.canParse`.
        #[wasm_bindgen(catch, static_method_of = PlatformUrl, js_class = "URL", js_name = canParse)]
        fn can_parse(url: &str) -> Result<bool, JsValue>;

        /// `new URL(url)`; an error where the parser rejects `url`.
        #[wasm_bindgen(catch, constructor, js_class = "URL")]
        fn new(url: &str) -> Result<PlatformUrl, JsValue>;
    }

    /// Whether the platform's WHATWG URL parser accepts the absolute URL `url`.
    pub(super) fn accepts(url: &str) -> bool {
        PlatformUrl::can_parse(url).unwrap_or_else(|_| PlatformUrl::new(url).is_ok())
    }
}

/// The WHATWG URL parser's verdict on an absolute URL: the platform's `URL`.
#[cfg(not(feature = "url"))]
fn whatwg_accepts(url: &str) -> bool {
    platform::accepts(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_hosts_and_the_parser() {
        let ok = [
            ("http://h/x", "h"),
            ("http://h:80/x", "h:80"),
            ("http://h:/x", "h:"),
            ("http://h:00080/x", "h:00080"),
            (
                "http://h:000000000000000000080/x",
                "h:000000000000000000080",
            ),
            ("http://h:65535/x", "h:65535"),
            ("http://u:p@h:8080/x", "u:p@h:8080"),
            ("http://[::1]:80/x", "[::1]:80"),
            ("http://[::1]/x", "[::1]"),
            ("https://xn--bcher-kva.example/x", "xn--bcher-kva.example"),
        ];
        for (url, authority) in ok {
            assert_eq!(check_authority(url, authority), Ok(()), "{url}");
        }
        let bad = [
            ("http://h:99999/x", "h:99999", "port \"99999\""),
            ("http://h:8o/x", "h:8o", "port \"8o\""),
            ("http://u@/x", "u@", "host is empty"),
            ("http://a<b/x", "a<b", "host \"a<b\" is not valid"),
            ("http://[::1/x", "[::1", "not valid"),
        ];
        for (url, authority, want) in bad {
            let got = check_authority(url, authority).unwrap_err();
            assert!(got.contains(want), "{url}: {got}");
        }
    }
}
