//! The Prometheus metrics served on the admin listener's `/metrics` (docs/contract/server.md "Operations"), in
//! the OpenMetrics text format (`prometheus-client`). Every name starts with `nudge_`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of a public request: the matched route (or `unmatched`) and the status code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `/v1/nudges/preview`, or `unmatched` for a 404.
    pub route: &'static str,
    /// The HTTP status code.
    pub status: u16,
}

/// Labels of a latency observation.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    /// As in [`RequestLabels::route`].
    pub route: &'static str,
}

/// Labels naming a site.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SiteLabels {
    /// The site id of the sites file.
    pub site: String,
}

/// Labels of a config load.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadLabels {
    /// The site id.
    pub site: String,
    /// `ok` (compiled and swapped in) or `refused` (invalid; the last valid config serves on).
    pub result: &'static str,
}

/// Labels of the sites file's reloads.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SitesFileLabels {
    /// `ok` (a changed file swapped in) or `refused` (invalid; the last valid one serves on).
    pub result: &'static str,
}

/// Labels of the relay's events.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RelayEventLabels {
    /// `accepted` (stored), `duplicate` (a `message_id` seen before) or `rejected` (an invalid
    /// event, listed in the answer).
    pub outcome: &'static str,
}

impl RelayEventLabels {
    /// Events stored.
    pub const ACCEPTED: RelayEventLabels = RelayEventLabels {
        outcome: "accepted",
    };
    /// Events whose `message_id` was seen before.
    pub const DUPLICATE: RelayEventLabels = RelayEventLabels {
        outcome: "duplicate",
    };
    /// Events refused one by one.
    pub const REJECTED: RelayEventLabels = RelayEventLabels {
        outcome: "rejected",
    };
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric of the server, registered once.
pub struct Metrics {
    registry: Registry,
    /// `nudge_http_requests_total{route,status}`: public requests answered.
    pub requests: Family<RequestLabels, Counter>,
    /// `nudge_http_request_duration_seconds{route}`: time from request head to response head.
    pub request_duration: HistogramFamily<RouteLabels>,
    /// `nudge_engine_duration_seconds`: time in `Engine::preview_body` per request.
    pub engine_duration: Histogram,
    /// `nudge_rate_limited_total{site}`: requests answered 429.
    pub rate_limited: Family<SiteLabels, Counter>,
    /// `nudge_config_reloads_total{site,result}`: config loads, the first one included.
    pub reloads: Family<ReloadLabels, Counter>,
    /// `nudge_sites_file_reloads_total{result}`: changed sites files swapped in or refused.
    pub sites_file_reloads: Family<SitesFileLabels, Counter>,
    /// `nudge_site_config_valid{site}`: 1 when the site serves a valid config, else 0.
    pub site_config_valid: Family<SiteLabels, Gauge>,
    /// `nudge_rate_limit_fallback_total`: decisions taken by the local limiter because Redis
    /// was unreachable.
    pub rate_limit_fallback: Counter,
    /// `nudge_redis_errors_total`: failed Redis calls and connection attempts.
    pub redis_errors: Counter,
    /// `nudge_redis_up`: 1 while the last Redis call succeeded, else 0 (0 without Redis).
    pub redis_up: Gauge,
    /// `nudge_connections_open`: connections of the public listener open now.
    pub connections_open: Gauge,
    /// `nudge_connections_refused_total`: connections answered 503 and closed because the
    /// listener had its most open.
    pub connections_refused: Counter,
    /// `nudge_redis_key_errors_total`: limiter calls Redis refused for one key (a key of the
    /// wrong type, say); decided locally for that request, Redis stays in use.
    pub redis_key_errors: Counter,
    /// `nudge_store_errors_total`: requests answered 503 because the store failed.
    pub store_errors: Counter,
    /// `nudge_store_up`: 1 while the store answers, else 0 (0 without a store).
    pub store_up: Gauge,
    /// `nudge_store_purged_sessions_total`: sessions deleted past retention plus grace.
    pub purged_sessions: Counter,
    /// `nudge_relay_events_total{outcome}`: events of relay batches answered 202, counted once
    /// the batch is committed: `accepted`, `duplicate`, `rejected`.
    pub relay_events: Family<RelayEventLabels, Counter>,
    /// `nudge_webhook_attempts_total{outcome}`: webhook delivery attempts (docs/contract/webhooks.md) by outcome:
    /// `delivered`, `failed`, `gone`.
    pub webhook_attempts: Family<OutcomeLabels, Counter>,
}

/// The outcome of a webhook attempt.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// `delivered`, `failed` or `gone`.
    pub outcome: &'static str,
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("nudge");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "Public requests answered, by route and status",
            requests.clone(),
        );
        let request_duration: HistogramFamily<RouteLabels> =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(25e-6, 2.0, 16)));
        registry.register(
            "http_request_duration_seconds",
            "Time from request head to response head, by route",
            request_duration.clone(),
        );
        let engine_duration = Histogram::new(exponential_buckets(1e-6, 2.0, 16));
        registry.register(
            "engine_duration_seconds",
            "Time spent in Engine::preview_body per request (JSON parse, normalization, evaluation, response body)",
            engine_duration.clone(),
        );
        let rate_limited = Family::<SiteLabels, Counter>::default();
        registry.register(
            "rate_limited",
            "Requests answered 429 RateLimitExceeded, by site",
            rate_limited.clone(),
        );
        let reloads = Family::<ReloadLabels, Counter>::default();
        registry.register(
            "config_reloads",
            "Config loads by site and result (ok, refused); the first load counts",
            reloads.clone(),
        );
        let sites_file_reloads = Family::<SitesFileLabels, Counter>::default();
        registry.register(
            "sites_file_reloads",
            "Changed sites files by result (ok, refused); the file read at start does not count",
            sites_file_reloads.clone(),
        );
        let site_config_valid = Family::<SiteLabels, Gauge>::default();
        registry.register(
            "site_config_valid",
            "1 when the site serves a valid config, 0 when it never had one",
            site_config_valid.clone(),
        );
        let rate_limit_fallback = Counter::default();
        registry.register(
            "rate_limit_fallback",
            "Rate-limit decisions taken by the local limiter because Redis was unreachable",
            rate_limit_fallback.clone(),
        );
        let redis_errors = Counter::default();
        registry.register(
            "redis_errors",
            "Failed Redis calls and connection attempts",
            redis_errors.clone(),
        );
        let redis_up = Gauge::default();
        registry.register(
            "redis_up",
            "1 while the last Redis call succeeded, else 0 (always 0 without --redis)",
            redis_up.clone(),
        );
        let connections_open = Gauge::default();
        registry.register(
            "connections_open",
            "Connections of the public listener open now",
            connections_open.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "connections_refused",
            "Connections answered 503 and closed because the public listener had its most open (--max-connections)",
            connections_refused.clone(),
        );
        let redis_key_errors = Counter::default();
        registry.register(
            "redis_key_errors",
            "Limiter calls that Redis refused for one key (such as a key of the wrong type); that request is decided locally",
            redis_key_errors.clone(),
        );
        let store_errors = Counter::default();
        registry.register(
            "store_errors",
            "Requests answered 503 because the store failed",
            store_errors.clone(),
        );
        let store_up = Gauge::default();
        registry.register(
            "store_up",
            "1 while the store answers, else 0 (always 0 without a store)",
            store_up.clone(),
        );
        let purged_sessions = Counter::default();
        registry.register(
            "store_purged_sessions",
            "Sessions deleted because they were older than their site's retention window plus 7 days",
            purged_sessions.clone(),
        );
        let relay_events = Family::<RelayEventLabels, Counter>::default();
        registry.register(
            "relay_events",
            "Events of relay batches answered 202, once committed, by outcome (accepted, duplicate, rejected)",
            relay_events.clone(),
        );
        let webhook_attempts = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "webhook_attempts",
            "Webhook delivery attempts by outcome (delivered, failed, gone)",
            webhook_attempts.clone(),
        );
        // Each outcome from the start, at 0, so that a rate is defined before the first batch.
        for labels in [
            RelayEventLabels::ACCEPTED,
            RelayEventLabels::DUPLICATE,
            RelayEventLabels::REJECTED,
        ] {
            relay_events.get_or_create(&labels).inc_by(0);
        }
        Metrics {
            registry,
            relay_events,
            connections_open,
            connections_refused,
            redis_key_errors,
            store_errors,
            store_up,
            purged_sessions,
            webhook_attempts,
            requests,
            request_duration,
            engine_duration,
            rate_limited,
            reloads,
            sites_file_reloads,
            site_config_valid,
            rate_limit_fallback,
            redis_errors,
            redis_up,
        }
    }

    /// The OpenMetrics text of every metric.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}
