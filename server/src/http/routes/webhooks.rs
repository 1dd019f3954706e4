//! The webhook routes (SPEC 16 "Endpoints"): endpoints, their secret, tests, attempts,
//! recover, and resending a message. Secret keys only; one list per site and mode. The rules
//! are `app/webhooks.rs`'s.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::app::state::AppState;
use crate::app::webhooks::{self as rules, Change, WebhookError};
use crate::domain::cursor::Endpoint as List;
use crate::domain::time::WireTime;
use crate::domain::webhook::endpoint::{AttemptItem, EndpointItem};
use crate::http::body::{read_body, read_json_body, refuse_nulls};
use crate::http::error::{ApiError, json};
use crate::http::page::{DataEnvelope, keyset_after, keyset_envelope, to_body};
use crate::http::pipeline::{ApiOptions, serve, store_of, unavailable};
use crate::http::query::{Params, read_time};

/// `GET`, `POST`.
pub const ENDPOINTS_PATH: &str = "/v1/webhook_endpoints";
/// `GET`, `PATCH`, `DELETE`.
pub const ENDPOINT_PATH: &str = "/v1/webhook_endpoints/{id}";
/// `POST`.
pub const ROTATE_PATH: &str = "/v1/webhook_endpoints/{id}/rotate_secret";
/// `POST`.
pub const TEST_PATH: &str = "/v1/webhook_endpoints/{id}/test";
/// `GET`.
pub const ATTEMPTS_PATH: &str = "/v1/webhook_endpoints/{id}/attempts";
/// `POST`.
pub const RECOVER_PATH: &str = "/v1/webhook_endpoints/{id}/recover";
/// `POST`.
pub const RESEND_PATH: &str = "/v1/webhook_messages/{id}/resend";

/// The largest body of these routes, in bytes.
const MAX_BODY_BYTES: usize = 16 * 1024;

impl WebhookError {
    fn into_api(self, app: &AppState) -> ApiError {
        match self {
            WebhookError::Invalid(m) => ApiError::InvalidRequest(m),
            WebhookError::Refused(r) => ApiError::InvalidRequest(format!("url: {r}")),
            WebhookError::NotFound(m) => ApiError::NotFound(m),
            WebhookError::TooMany => ApiError::Conflict(format!(
                "this site and mode have {} webhook endpoints, the most allowed; delete one first",
                crate::domain::webhook::endpoint::MAX_ENDPOINTS
            )),
            WebhookError::Store(e) => unavailable(app, &e),
        }
    }
}

/// `{"data": ...}` with `status`.
fn data<T: serde::Serialize>(status: StatusCode, item: T) -> Response {
    json(status, to_body(&DataEnvelope { data: item }))
}

/// Reads a JSON body of type `T` (`what` describes it in errors).
async fn body<T: for<'de> Deserialize<'de>>(
    request: Request,
    options: &ApiOptions,
    what: &str,
) -> Result<T, ApiError> {
    let bytes = read_json_body(request, MAX_BODY_BYTES, options).await?;
    refuse_nulls(&bytes)?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::InvalidRequest(format!("the request body must be {what}: {e}")))
}

/// Reads a body these routes do not use (any, or none), so the connection can carry the next
/// request.
async fn discard_body(request: Request, options: &ApiOptions) -> Result<(), ApiError> {
    read_body(request, MAX_BODY_BYTES, options.body_total_timeout).await?;
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Create {
    url: String,
    event_types: Vec<String>,
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Patch {
    url: Option<String>,
    event_types: Option<Vec<String>>,
    description: Option<String>,
    status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Recover {
    since: String,
}

/// `GET /v1/webhook_endpoints` (newest first) and `POST` (201, the secret shown once).
pub async fn endpoints(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let app = &*app;
    let post = request.method() == axum::http::Method::POST;
    serve(app, request, |caller, request| async move {
        let store = store_of(app)?;
        if post {
            let sent: Create = body(
                request,
                &options,
                "{\"url\": URL, \"event_types\": [TYPE, ...], \"description\"?: TEXT}",
            )
            .await?;
            let endpoint = rules::create(
                &app.delivery,
                store,
                &caller.scope,
                &sent.url,
                &sent.event_types,
                sent.description,
            )
            .await
            .map_err(|e| e.into_api(app))?;
            return Ok(data(
                StatusCode::CREATED,
                EndpointItem::with_secret(&endpoint),
            ));
        }
        let params = Params::parse(request.uri().query(), &["limit", "cursor"])?;
        let limit = params.limit()?;
        let after = keyset_after(app, &caller, List::WebhookEndpoints, &params)?;
        let rows = store
            .webhook_endpoints(
                &caller.scope,
                after.as_ref().map(|(at, id)| (*at, id.as_str())),
                limit + 1,
            )
            .await
            .map_err(|e| unavailable(app, &e))?;
        Ok(json(
            StatusCode::OK,
            keyset_envelope(
                app,
                &caller,
                List::WebhookEndpoints,
                &rows,
                limit,
                |e| (e.created_at_ms, e.id.clone()),
                EndpointItem::of,
            ),
        ))
    })
    .await
}

/// `GET`, `PATCH` and `DELETE /v1/webhook_endpoints/{id}`.
pub async fn endpoint(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    let method = request.method().clone();
    serve(app, request, |caller, request| async move {
        let store = store_of(app)?;
        let scope = &caller.scope;
        if method == axum::http::Method::DELETE {
            return if store.delete_webhook_endpoint(scope, &id).await.map_err(|e| unavailable(app, &e))? {
                Ok(json(StatusCode::OK, "{\"data\":{\"deleted\":true}}".to_owned()))
            } else {
                Err(rules::not_found(&id).into_api(app))
            };
        }
        let endpoint = if method == axum::http::Method::PATCH {
            let sent: Patch = body(
                request,
                &options,
                "{\"url\"?: URL, \"event_types\"?: [TYPE, ...], \"description\"?: TEXT, \"status\"?: \"enabled\" | \"disabled\"}",
            )
            .await?;
            let change = Change {
                url: sent.url,
                event_types: sent.event_types,
                description: sent.description.map(|d| Some(d).filter(|d| !d.is_empty())),
                status: sent.status,
            };
            rules::update(&app.delivery, store, scope, &id, change).await
        } else {
            Params::parse(request.uri().query(), &[])?;
            rules::get(store, scope, &id).await
        }
        .map_err(|e| e.into_api(app))?;
        Ok(data(StatusCode::OK, EndpointItem::of(&endpoint)))
    })
    .await
}

/// `POST /v1/webhook_endpoints/{id}/rotate_secret`: the new secret, shown once.
pub async fn rotate(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        discard_body(request, &options).await?;
        let endpoint = rules::rotate_secret(store_of(app)?, &caller.scope, &id)
            .await
            .map_err(|e| e.into_api(app))?;
        Ok(data(StatusCode::OK, EndpointItem::with_secret(&endpoint)))
    })
    .await
}

/// `POST /v1/webhook_endpoints/{id}/test`: 202 with the message (`webhook.test`).
pub async fn test(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        discard_body(request, &options).await?;
        let message = rules::send_test(&app.delivery, store_of(app)?, &caller.scope, &id)
            .await
            .map_err(|e| e.into_api(app))?;
        let body: &serde_json::value::RawValue = serde_json::from_str(&message.body)
            .map_err(|e| ApiError::InvalidRequest(e.to_string()))?;
        Ok(data(StatusCode::ACCEPTED, body))
    })
    .await
}

/// `GET /v1/webhook_endpoints/{id}/attempts`: newest first.
pub async fn attempts(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        let params = Params::parse(request.uri().query(), &["limit", "cursor"])?;
        let limit = params.limit()?;
        let before = match keyset_after(app, &caller, List::WebhookAttempts, &params)? {
            Some((seq, of)) if of == id => Some(seq),
            Some(_) => {
                return Err(ApiError::InvalidCursor(
                    "cursor: it walks another endpoint's attempts; start again without a cursor"
                        .to_owned(),
                ));
            }
            None => None,
        };
        let rows = store_of(app)?
            .webhook_attempts(&caller.scope, &id, before, limit + 1)
            .await
            .map_err(|e| unavailable(app, &e))?
            .ok_or_else(|| rules::not_found(&id).into_api(app))?;
        Ok(json(
            StatusCode::OK,
            keyset_envelope(
                app,
                &caller,
                List::WebhookAttempts,
                &rows,
                limit,
                |a| (a.seq, id.clone()),
                AttemptItem::of,
            ),
        ))
    })
    .await
}

/// `POST /v1/webhook_endpoints/{id}/recover` `{"since"}`: 202 with how many messages.
pub async fn recover(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        let sent: Recover = body(request, &options, "{\"since\": RFC 3339 TIME}").await?;
        let since = read_time("since", &sent.since)?.ceil_ms();
        let n = rules::recover(&app.delivery, store_of(app)?, &caller.scope, &id, since)
            .await
            .map_err(|e| e.into_api(app))?;
        Ok(data(
            StatusCode::ACCEPTED,
            serde_json::json!({ "messages": n, "since": WireTime(since) }),
        ))
    })
    .await
}

/// `POST /v1/webhook_messages/{id}/resend`: 202 with how many deliveries are due again.
pub async fn resend(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        discard_body(request, &options).await?;
        let n = rules::resend(&app.delivery, store_of(app)?, &caller.scope, &id)
            .await
            .map_err(|e| e.into_api(app))?;
        Ok(data(
            StatusCode::ACCEPTED,
            serde_json::json!({ "message_id": id, "deliveries": n }),
        ))
    })
    .await
}
