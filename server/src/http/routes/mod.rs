//! The public listener's routes, one room each: extract, call, respond. What they share (the
//! pipeline, bodies, pages, errors) is one floor up, in [`crate::http`].
//!
//! [`ROUTES`] is the one list of them: each route's path, methods, metric label, admission and
//! handlers. The router is built from it (`http::router`), and so are the `route` label of
//! the request metrics, the 404's list of what the server serves and every 405's `Allow`; a
//! new route is one entry here (and its room).

pub mod backtest;
pub mod bench;
pub mod config;
pub mod events;
pub mod nudges;
pub mod preview;
pub mod reports;
pub mod runtime;
pub mod sessions;
pub mod versions;
pub mod webhook_actions;
pub mod webhook_attempts;
pub mod webhooks;

use std::sync::Arc;

use axum::http::Method;
use axum::middleware;
use axum::routing::{MethodRouter, get, post};

use crate::app::state::AppState;
use crate::http::any_origin;

/// How a route's callers are admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// By the admission layer before the handler (`pipeline::admitted`): a secret key, its
    /// rate limit, the server's lifecycle.
    Keyed,
    /// By the handler itself: the preview (its pipeline, measured by the benchmark), the relay
    /// and the runtime config (publishable keys, any origin), the benchmark's constant route.
    Own,
}

/// One route of the public listener.
pub struct Route {
    /// The path as the router matches it (`{id}`: one segment).
    pub path: &'static str,
    /// The methods it serves, in the order `Allow` and the 404 name them; any other method is
    /// answered 405 (`HEAD` too, unless listed).
    pub methods: &'static [Method],
    /// Its `route` label on `/metrics` (`nudge_requests_total`, the durations).
    pub label: &'static str,
    /// How its callers are admitted.
    pub access: Access,
    /// Served only with `--constant-route` (the load benchmark's baseline; not in the API).
    pub bench_only: bool,
    /// Its handlers, one per method of [`Route::methods`] (`tests/integration/routes.rs`
    /// checks each answers).
    pub handlers: fn() -> MethodRouter<Arc<AppState>>,
}

impl Route {
    /// `Allow`'s value: the methods, comma-separated (`GET, POST`).
    pub fn allow(&self) -> String {
        let names: Vec<&str> = self.methods.iter().map(Method::as_str).collect();
        names.join(", ")
    }

    /// The route in words, for the 404: `GET and POST /v1/config/versions`.
    pub fn words(&self) -> String {
        format!(
            "{} {}",
            and_list(self.methods.iter().map(Method::as_str)),
            self.path
        )
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.into_iter().collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

const GET: &[Method] = &[Method::GET];
const POST: &[Method] = &[Method::POST];
const GET_POST: &[Method] = &[Method::GET, Method::POST];

/// Every route of the public listener (the API document's paths, and the benchmark's one).
pub static ROUTES: [Route; 19] = [
    Route {
        path: preview::PREVIEW_PATH,
        methods: POST,
        label: preview::PREVIEW_PATH,
        access: Access::Own,
        bench_only: false,
        handlers: || post(preview::preview),
    },
    Route {
        path: sessions::LIST_PATH,
        methods: GET,
        label: sessions::LIST_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(sessions::list),
    },
    Route {
        path: sessions::DETAIL_PATH,
        methods: GET,
        label: sessions::DETAIL_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(sessions::detail),
    },
    Route {
        path: nudges::LIST_PATH,
        methods: GET,
        label: nudges::LIST_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(nudges::list),
    },
    Route {
        path: events::EVENTS_PATH,
        methods: &[Method::POST, Method::OPTIONS],
        label: events::EVENTS_PATH,
        access: Access::Own,
        bench_only: false,
        handlers: || post(events::events).options(any_origin::relay_preflight),
    },
    Route {
        path: backtest::BACKTEST_PATH,
        methods: POST,
        label: backtest::BACKTEST_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || post(backtest::backtest),
    },
    Route {
        path: reports::UPLIFT_PATH,
        methods: GET,
        label: reports::UPLIFT_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(reports::uplift),
    },
    Route {
        path: config::CONFIG_PATH,
        methods: GET,
        label: config::CONFIG_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(config::current),
    },
    Route {
        path: versions::VERSIONS_PATH,
        methods: GET_POST,
        label: versions::VERSIONS_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(versions::versions).post(versions::publish),
    },
    Route {
        path: versions::VERSION_PATH,
        methods: GET,
        label: versions::VERSION_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(versions::version),
    },
    Route {
        path: runtime::RUNTIME_PATH,
        methods: &[Method::GET, Method::HEAD, Method::OPTIONS],
        label: runtime::RUNTIME_PATH,
        access: Access::Own,
        bench_only: false,
        handlers: || {
            get(runtime::runtime_config)
                .head(runtime::runtime_config)
                .options(any_origin::runtime_preflight)
                .route_layer(middleware::map_response(any_origin::runtime_answer))
        },
    },
    Route {
        path: webhooks::ENDPOINTS_PATH,
        methods: GET_POST,
        label: webhooks::ENDPOINTS_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(webhooks::list).post(webhooks::create),
    },
    Route {
        path: webhooks::ENDPOINT_PATH,
        methods: &[Method::GET, Method::PATCH, Method::DELETE],
        label: webhooks::ENDPOINT_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || {
            get(webhooks::get)
                .patch(webhooks::update)
                .delete(webhooks::delete)
        },
    },
    Route {
        path: webhook_actions::ROTATE_PATH,
        methods: POST,
        label: webhook_actions::ROTATE_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || post(webhook_actions::rotate),
    },
    Route {
        path: webhook_actions::TEST_PATH,
        methods: POST,
        label: webhook_actions::TEST_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || post(webhook_actions::test),
    },
    Route {
        path: webhook_attempts::ATTEMPTS_PATH,
        methods: GET,
        label: webhook_attempts::ATTEMPTS_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || get(webhook_attempts::attempts),
    },
    Route {
        path: webhook_actions::RECOVER_PATH,
        methods: POST,
        label: webhook_actions::RECOVER_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || post(webhook_actions::recover),
    },
    Route {
        path: webhook_actions::RESEND_PATH,
        methods: POST,
        label: webhook_actions::RESEND_PATH,
        access: Access::Keyed,
        bench_only: false,
        handlers: || post(webhook_actions::resend),
    },
    Route {
        path: bench::CONSTANT_PATH,
        methods: POST,
        label: bench::CONSTANT_PATH,
        access: Access::Own,
        bench_only: true,
        handlers: || post(bench::constant),
    },
];

/// The `route` label of a request no route matched (a 404, or one refused before routing).
pub const UNMATCHED: &str = "unmatched";

/// The routes a router serves: all but the benchmark's unless `constant_route`.
pub fn served(constant_route: bool) -> impl Iterator<Item = &'static Route> {
    ROUTES
        .iter()
        .filter(move |r| constant_route || !r.bench_only)
}

/// The label of the route whose path is `matched` ([`UNMATCHED`] for none).
pub fn label_of(matched: Option<&str>) -> &'static str {
    matched
        .and_then(|path| ROUTES.iter().find(|r| r.path == path))
        .map_or(UNMATCHED, |r| r.label)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    #[test]
    fn routes_are_listed_in_words() {
        assert_eq!(and_list(["GET"]), "GET");
        assert_eq!(and_list(["GET", "POST"]), "GET and POST");
        assert_eq!(
            and_list(["GET", "PATCH", "DELETE"]),
            "GET, PATCH and DELETE"
        );
        let versions = served(false)
            .find(|r| r.path == versions::VERSIONS_PATH)
            .unwrap();
        assert_eq!(versions.words(), "GET and POST /v1/config/versions");
        assert_eq!(versions.allow(), "GET, POST");
        assert_eq!(
            label_of(Some(webhooks::ENDPOINT_PATH)),
            webhooks::ENDPOINT_PATH
        );
        assert_eq!(label_of(Some("/v1/nope")), UNMATCHED);
        assert_eq!(label_of(Some("")), UNMATCHED);
        assert_eq!(label_of(None), UNMATCHED);
    }

    #[test]
    fn the_table_is_the_api_documents_paths_and_methods() {
        let document: serde_json::Value =
            serde_json::from_str(&crate::http::openapi::openapi_json().unwrap()).unwrap();
        let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for method in [
                "get", "put", "post", "delete", "options", "head", "patch", "trace",
            ] {
                if item.get(method).is_some() {
                    documented
                        .entry(path.clone())
                        .or_default()
                        .insert(method.to_uppercase());
                }
            }
        }
        let mut tabled: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for route in served(false) {
            let methods = route
                .methods
                .iter()
                .map(|m| m.as_str().to_owned())
                .collect();
            assert!(
                tabled.insert(route.path.to_owned(), methods).is_none(),
                "{} twice",
                route.path
            );
            assert_eq!(route.label, route.path);
        }
        assert_eq!(
            documented.keys().collect::<Vec<_>>(),
            tabled.keys().collect::<Vec<_>>()
        );
        for (path, methods) in &documented {
            let served = &tabled[path];
            assert!(methods.is_subset(served), "{path}: {methods:?} {served:?}");
            // A served method the document leaves out is a CORS preflight or a HEAD.
            for extra in served.difference(methods) {
                assert!(extra == "OPTIONS" || extra == "HEAD", "{path}: {extra}");
            }
        }
    }
}
