//! Where a webhook may be delivered (docs/contract/webhooks.md "Safe by construction").
//!
//! An endpoint URL is `https:` (or `http:` with `--webhook-allow-http`), with a host and no
//! credentials. Every address its host resolves to (or the literal address it names, which no
//! resolver sees) is judged: loopback, private, link-local, CGNAT (100.64.0.0/10), unique-local,
//! multicast, unspecified and the other special-purpose ranges are refused unless a
//! `--webhook-allow-private CIDR` range holds the address; an IPv4-mapped IPv6 address is judged
//! as the IPv4 address it maps. The check runs at registration and at each attempt, and the
//! attempt connects only to the addresses checked (the delivery's resolver, not this module).
//! CIDR ranges are `ipnet`'s; URLs are `url`'s (WHATWG).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;
use url::{Host, Url};

/// Which special-purpose range refused an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16.
    Private,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// 100.64.0.0/10 (carrier-grade NAT).
    Cgnat,
    /// fc00::/7.
    UniqueLocal,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// Other ranges no public host uses: 192.0.0.0/24, the documentation ranges (192.0.2.0/24,
    /// 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32), benchmarking (198.18.0.0/15),
    /// 240.0.0.0/4 and broadcast, 64:ff9b:1::/48, discard-only 100::/64.
    Reserved,
}

impl Range {
    /// The range's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Range::Loopback => "loopback",
            Range::Private => "private",
            Range::LinkLocal => "link-local",
            Range::Cgnat => "CGNAT (100.64.0.0/10)",
            Range::UniqueLocal => "unique-local (fc00::/7)",
            Range::Multicast => "multicast",
            Range::Unspecified => "unspecified",
            Range::Reserved => "reserved",
        }
    }
}

/// The special-purpose range `ip` is in, `None` for a public address. An IPv4-mapped IPv6
/// address (`::ffff:a.b.c.d`) is judged as `a.b.c.d`.
pub fn special_range(ip: IpAddr) -> Option<Range> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4_range(v4),
            None => v6_range(v6),
        },
    }
}

fn v4_range(ip: Ipv4Addr) -> Option<Range> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (127, _, _) => Range::Loopback,
        (10, _, _) | (192, 168, _) => Range::Private,
        (172, 16..=31, _) => Range::Private,
        (169, 254, _) => Range::LinkLocal,
        (100, 64..=127, _) => Range::Cgnat,
        (224..=239, _, _) => Range::Multicast,
        (0, _, _) => Range::Unspecified,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Range::Reserved,
        (198, 18..=19, _) | (240..=255, _, _) => Range::Reserved,
        _ => return None,
    })
}

fn v6_range(ip: Ipv6Addr) -> Option<Range> {
    let s = ip.segments();
    let first = s.first().copied().unwrap_or(0);
    Some(if ip.is_loopback() {
        Range::Loopback
    } else if ip.is_unspecified() {
        Range::Unspecified
    } else if first & 0xffc0 == 0xfe80 {
        Range::LinkLocal
    } else if first & 0xfe00 == 0xfc00 {
        Range::UniqueLocal
    } else if first & 0xff00 == 0xff00 {
        Range::Multicast
    } else if (first == 0x2001 && s.get(1) == Some(&0x0db8))
        || (first == 0x0064 && s.get(1) == Some(&0xff9b) && s.get(2) == Some(&0x0001))
        || (first == 0x0100 && s.get(1..4) == Some(&[0, 0, 0]))
        // Deprecated IPv4-compatible addresses (::a.b.c.d) and site-local (fec0::/10).
        || (s.get(..6) == Some(&[0, 0, 0, 0, 0, 0]))
        || first & 0xffc0 == 0xfec0
    {
        Range::Reserved
    } else {
        return None;
    })
}

/// A refused endpoint URL or address, with the input in its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The URL does not parse (WHATWG), or has no host.
    Url {
        /// The URL as given.
        url: String,
        /// The parser's reason.
        reason: String,
    },
    /// The scheme is not `https:` (nor `http:` with `--webhook-allow-http`).
    Scheme {
        /// The URL as given.
        url: String,
    },
    /// The URL carries a user name or password.
    Credentials {
        /// The URL as given.
        url: String,
    },
    /// The host is, or resolves to, an address of a refused range.
    Address {
        /// The host as in the URL.
        host: String,
        /// The refused address.
        ip: IpAddr,
        /// Its range.
        range: Range,
    },
    /// The host resolves to no address.
    Unresolved {
        /// The host as in the URL.
        host: String,
        /// The resolver's reason.
        reason: String,
    },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Url { url, reason } => write!(f, "url {url:?} is not a valid URL: {reason}"),
            Refused::Scheme { url } => write!(
                f,
                "url {url:?} must be https: (http: only on a server started with --webhook-allow-http)"
            ),
            Refused::Credentials { url } => write!(
                f,
                "url {url:?} carries a user name or password; put the credentials nowhere, the signature authenticates deliveries"
            ),
            Refused::Address { host, ip, range } => write!(
                f,
                "url host {host:?} is {ip}, a {} address, which webhooks are never sent to (a server started with --webhook-allow-private CIDR opens a range)",
                range.name()
            ),
            Refused::Unresolved { host, reason } => {
                write!(f, "url host {host:?} does not resolve: {reason}")
            }
        }
    }
}

impl std::error::Error for Refused {}

/// The server's delivery policy: `--webhook-allow-http` and the `--webhook-allow-private`
/// ranges. The default refuses `http:` and every special-purpose range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Accept `http:` URLs as well as `https:`.
    pub allow_http: bool,
    /// Ranges whose addresses are accepted though special-purpose (tests, private networks).
    pub allow_private: Vec<IpNet>,
}

/// An endpoint URL that passed [`Policy::check_url`]: where to resolve and connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL, as the WHATWG parser serializes it.
    pub url: Url,
    /// The host to resolve (a name), or `None` when the URL names an address.
    pub name: Option<String>,
    /// The addresses already known: the literal address of the URL, judged.
    pub literal: Option<SocketAddr>,
    /// The port (the scheme's default when the URL has none).
    pub port: u16,
}

impl Policy {
    /// Judges an endpoint URL before any resolution: scheme, credentials, and a literal
    /// address (which skips resolvers, so it is judged here).
    ///
    /// # Errors
    ///
    /// [`Refused::Url`], [`Refused::Scheme`], [`Refused::Credentials`] or [`Refused::Address`].
    pub fn check_url(&self, text: &str) -> Result<Target, Refused> {
        let url = Url::parse(text).map_err(|e| Refused::Url {
            url: text.to_owned(),
            reason: e.to_string(),
        })?;
        match url.scheme() {
            "https" => {}
            "http" if self.allow_http => {}
            _ => {
                return Err(Refused::Scheme {
                    url: text.to_owned(),
                });
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refused::Credentials {
                url: text.to_owned(),
            });
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let (name, literal) = match url.host() {
            None => {
                return Err(Refused::Url {
                    url: text.to_owned(),
                    reason: "no host".to_owned(),
                });
            }
            Some(Host::Domain(name)) => (Some(name.to_owned()), None),
            Some(Host::Ipv4(ip)) => (None, Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => (None, Some(IpAddr::V6(ip))),
        };
        let literal = match literal {
            Some(ip) => Some(SocketAddr::new(self.check_ip(&host_text(&url), ip)?, port)),
            None => None,
        };
        Ok(Target {
            url,
            name,
            literal,
            port,
        })
    }

    /// Judges one address of `host`: accepted when public or in an allowed range.
    ///
    /// # Errors
    ///
    /// [`Refused::Address`] naming the host, the address and its range.
    pub fn check_ip(&self, host: &str, ip: IpAddr) -> Result<IpAddr, Refused> {
        let judged = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            IpAddr::V4(_) => ip,
        };
        match special_range(judged) {
            Some(range) if !self.allowed(ip, judged) => Err(Refused::Address {
                host: host.to_owned(),
                ip,
                range,
            }),
            _ => Ok(ip),
        }
    }

    /// Judges every address `host` resolved to: all must pass (one refused address refuses
    /// the host, so a name cannot mix a public address with an internal one).
    ///
    /// # Errors
    ///
    /// [`Refused::Unresolved`] for no address, else the first [`Refused::Address`].
    pub fn check_resolved(
        &self,
        host: &str,
        addrs: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Vec<SocketAddr>, Refused> {
        let addrs: Vec<SocketAddr> = addrs.into_iter().collect();
        if addrs.is_empty() {
            return Err(Refused::Unresolved {
                host: host.to_owned(),
                reason: "no address".to_owned(),
            });
        }
        for a in &addrs {
            self.check_ip(host, a.ip())?;
        }
        Ok(addrs)
    }

    fn allowed(&self, ip: IpAddr, judged: IpAddr) -> bool {
        self.allow_private
            .iter()
            .any(|net| net.contains(&ip) || net.contains(&judged))
    }
}

/// The URL's host as written in messages (`[::1]` for IPv6).
fn host_text(url: &Url) -> String {
    url.host_str().unwrap_or("").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn special_ranges_are_named_and_public_addresses_pass() {
        let table = [
            ("127.0.0.1", Some(Range::Loopback)),
            ("127.255.0.9", Some(Range::Loopback)),
            ("::1", Some(Range::Loopback)),
            ("10.1.2.3", Some(Range::Private)),
            ("172.16.0.1", Some(Range::Private)),
            ("172.31.255.255", Some(Range::Private)),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(Range::Private)),
            ("169.254.169.254", Some(Range::LinkLocal)),
            ("fe80::1", Some(Range::LinkLocal)),
            ("100.64.0.1", Some(Range::Cgnat)),
            ("100.127.255.254", Some(Range::Cgnat)),
            ("100.128.0.1", None),
            ("fc00::1", Some(Range::UniqueLocal)),
            ("fd12:3456::1", Some(Range::UniqueLocal)),
            ("224.0.0.1", Some(Range::Multicast)),
            ("ff02::1", Some(Range::Multicast)),
            ("0.0.0.0", Some(Range::Unspecified)),
            ("::", Some(Range::Unspecified)),
            ("255.255.255.255", Some(Range::Reserved)),
            ("192.0.2.10", Some(Range::Reserved)),
            ("2001:db8::1", Some(Range::Reserved)),
            ("::ffff:127.0.0.1", Some(Range::Loopback)),
            ("::ffff:10.0.0.1", Some(Range::Private)),
            ("::ffff:8.8.8.8", None),
            ("8.8.8.8", None),
            ("93.184.215.14", None),
            ("2606:4700:4700::1111", None),
        ];
        for (text, want) in table {
            assert_eq!(special_range(ip(text)), want, "{text}");
        }
    }

    #[test]
    fn urls_are_https_without_credentials_and_literal_addresses_are_judged() {
        let strict = Policy::default();
        let t = strict
            .check_url("https://hooks.example.com/in?x=1")
            .unwrap();
        assert_eq!(
            (t.name.as_deref(), t.literal, t.port),
            (Some("hooks.example.com"), None, 443)
        );
        assert!(matches!(
            strict.check_url("http://hooks.example.com/"),
            Err(Refused::Scheme { .. })
        ));
        assert!(matches!(
            strict.check_url("ftp://x.example/"),
            Err(Refused::Scheme { .. })
        ));
        assert!(matches!(
            strict.check_url("https://u:p@x.example/"),
            Err(Refused::Credentials { .. })
        ));
        assert!(matches!(
            strict.check_url("not a url"),
            Err(Refused::Url { .. })
        ));
        let err = strict.check_url("https://127.0.0.1:8443/hook").unwrap_err();
        assert_eq!(
            err,
            Refused::Address {
                host: "127.0.0.1".into(),
                ip: ip("127.0.0.1"),
                range: Range::Loopback
            }
        );
        assert!(err.to_string().contains("--webhook-allow-private"), "{err}");
        assert!(matches!(
            strict.check_url("https://[::ffff:192.168.0.1]/"),
            Err(Refused::Address {
                range: Range::Private,
                ..
            })
        ));
        // The WHATWG parser reads other spellings of an IPv4 address as that address.
        assert!(matches!(
            strict.check_url("https://2130706433/"),
            Err(Refused::Address {
                range: Range::Loopback,
                ..
            })
        ));
        assert!(matches!(
            strict.check_url("https://0x7f.1/"),
            Err(Refused::Address {
                range: Range::Loopback,
                ..
            })
        ));
        let t = strict.check_url("https://8.8.8.8/").unwrap();
        assert_eq!(t.literal, Some("8.8.8.8:443".parse().unwrap()));
    }

    #[test]
    fn the_flags_open_http_and_private_ranges() {
        let open = Policy {
            allow_http: true,
            allow_private: vec!["127.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()],
        };
        let t = open.check_url("http://127.0.0.1:9000/hook").unwrap();
        assert_eq!(t.literal, Some("127.0.0.1:9000".parse().unwrap()));
        assert!(open.check_url("http://[fd00::5]/").is_ok());
        assert!(matches!(
            open.check_url("http://10.0.0.1/"),
            Err(Refused::Address { .. })
        ));
        // A mapped address is allowed by its IPv4 range.
        assert!(open.check_ip("h", ip("::ffff:127.0.0.1")).is_ok());
    }

    #[test]
    fn a_name_is_refused_when_any_of_its_addresses_is() {
        let strict = Policy::default();
        let public: SocketAddr = "93.184.215.14:443".parse().unwrap();
        let internal: SocketAddr = "10.0.0.7:443".parse().unwrap();
        assert_eq!(
            strict.check_resolved("x.example", [public]).unwrap(),
            vec![public]
        );
        assert!(matches!(
            strict.check_resolved("x.example", [public, internal]),
            Err(Refused::Address {
                range: Range::Private,
                ..
            })
        ));
        assert!(matches!(
            strict.check_resolved("x.example", []),
            Err(Refused::Unresolved { .. })
        ));
    }
}
