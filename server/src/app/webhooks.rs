//! Webhook endpoint management (docs/contract/webhooks.md "Endpoints"): the rules of create, update, rotate,
//! test, resend and recover, called by `http/routes/webhooks.rs`. Delivery is `delivery.rs`.

use crate::app::delivery::Delivery;
use crate::domain::event::Scope;
use crate::domain::webhook::endpoint::{
    Endpoint, MAX_DESCRIPTION_CHARS, MAX_ENDPOINTS, Status, parse_types, random_id,
};
use crate::domain::webhook::{Message, Refused, Secret, StoredSecret, outbox};
use crate::store::{Store, StoreError};

/// How far back `recover` reaches (docs/contract/webhooks.md: at most 14 days), and how long messages and
/// attempts are kept.
pub const RECOVER_WINDOW_MS: i64 = 14 * 24 * 3600 * 1000;

/// Why a webhook request was refused.
#[derive(Debug)]
pub enum WebhookError {
    /// A field of the request, named with its value (400).
    Invalid(String),
    /// The URL is refused by the delivery policy (400, naming the URL or address).
    Refused(Refused),
    /// No such endpoint or message for the caller's site and mode (404).
    NotFound(String),
    /// The site and mode have [`MAX_ENDPOINTS`] endpoints (409).
    TooMany,
    /// The store did not answer (503).
    Store(StoreError),
}

impl From<StoreError> for WebhookError {
    fn from(e: StoreError) -> WebhookError {
        WebhookError::Store(e)
    }
}

/// A new endpoint as asked for (`POST /v1/webhook_endpoints`'s body, read as it is).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEndpoint {
    /// The URL, checked (and resolved) by the policy before any connection.
    pub url: String,
    /// The event types it subscribes to (docs/contract/webhooks.md "Events").
    pub event_types: Vec<String>,
    /// A description, at most 500 characters.
    pub description: Option<String>,
}

/// What may change in an endpoint (`PATCH`): each field left out stays.
#[derive(Debug, Default)]
pub struct Change {
    /// A new URL, checked as at registration.
    pub url: Option<String>,
    /// New event types.
    pub event_types: Option<Vec<String>>,
    /// A new description (`Some(None)`: none).
    pub description: Option<Option<String>>,
    /// `enabled` or `disabled`.
    pub status: Option<String>,
}

fn check_description(description: Option<String>) -> Result<Option<String>, WebhookError> {
    match description {
        Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => {
            Err(WebhookError::Invalid(format!(
                "description has {} characters; at most {MAX_DESCRIPTION_CHARS} are allowed",
                d.chars().count()
            )))
        }
        other => Ok(other),
    }
}

/// The 404 of an endpoint id that the caller's site and mode do not have.
pub fn not_found(id: &str) -> WebhookError {
    let shown: String = id.chars().take(80).collect();
    WebhookError::NotFound(format!("no webhook endpoint {shown:?}"))
}

/// Registers an endpoint: URL checked (and resolved) by the policy before any connection,
/// event types known, a new `whsec_` secret.
///
/// # Errors
///
/// [`WebhookError`].
pub async fn create(
    delivery: &Delivery,
    store: &Store,
    scope: &Scope,
    asked: NewEndpoint,
) -> Result<Endpoint, WebhookError> {
    let event_types = parse_types(&asked.event_types).map_err(WebhookError::Invalid)?;
    let description = check_description(asked.description)?;
    let url = delivery
        .check_endpoint_url(&asked.url)
        .await
        .map_err(WebhookError::Refused)?;
    let now = delivery.now_ms();
    let endpoint = Endpoint {
        id: random_id("we_", 12).map_err(WebhookError::Invalid)?,
        url,
        event_types,
        description,
        status: Status::Enabled,
        secret: StoredSecret::from(
            Secret::generate().map_err(|e| WebhookError::Invalid(e.to_string()))?,
        ),
        previous_secret: None,
        previous_secret_until_ms: None,
        failing_since_ms: None,
        created_at_ms: now,
        updated_at_ms: now,
    };
    if store
        .create_webhook_endpoint(scope, &endpoint, MAX_ENDPOINTS)
        .await?
    {
        Ok(endpoint)
    } else {
        Err(WebhookError::TooMany)
    }
}

/// The endpoint `id` of `scope`.
///
/// # Errors
///
/// [`WebhookError::NotFound`], [`WebhookError::Store`].
pub async fn get(store: &Store, scope: &Scope, id: &str) -> Result<Endpoint, WebhookError> {
    store
        .webhook_endpoint(scope, id)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Deletes the endpoint `id` of `scope`, with its deliveries and attempts.
///
/// # Errors
///
/// [`WebhookError::NotFound`], [`WebhookError::Store`].
pub async fn delete(store: &Store, scope: &Scope, id: &str) -> Result<(), WebhookError> {
    if store.delete_webhook_endpoint(scope, id).await? {
        Ok(())
    } else {
        Err(not_found(id))
    }
}

/// Applies `change` to the endpoint `id`; a new URL is checked as at registration. Disabling
/// fails its pending deliveries; enabling starts the 5-day rule afresh.
///
/// # Errors
///
/// [`WebhookError`].
pub async fn update(
    delivery: &Delivery,
    store: &Store,
    scope: &Scope,
    id: &str,
    change: Change,
) -> Result<Endpoint, WebhookError> {
    let mut endpoint = get(store, scope, id).await?;
    if let Some(types) = &change.event_types {
        endpoint.event_types = parse_types(types).map_err(WebhookError::Invalid)?;
    }
    if let Some(description) = change.description {
        endpoint.description = check_description(description)?;
    }
    if let Some(status) = &change.status {
        endpoint.status = Status::parse(status).map_err(WebhookError::Invalid)?;
    }
    if let Some(url) = &change.url {
        endpoint.url = delivery
            .check_endpoint_url(url)
            .await
            .map_err(WebhookError::Refused)?;
    }
    endpoint.updated_at_ms = delivery.now_ms();
    if !store.save_webhook_endpoint(scope, &endpoint).await? {
        return Err(not_found(id));
    }
    delivery.wake();
    Ok(endpoint)
}

/// A new secret for endpoint `id`; the old one signs too for 24 hours (unless it does not
/// read: [`Endpoint::rotate`]).
///
/// # Errors
///
/// [`WebhookError`].
pub async fn rotate_secret(
    delivery: &Delivery,
    store: &Store,
    scope: &Scope,
    id: &str,
) -> Result<Endpoint, WebhookError> {
    let mut endpoint = get(store, scope, id).await?;
    let secret = Secret::generate().map_err(|e| WebhookError::Invalid(e.to_string()))?;
    endpoint.rotate(secret, delivery.now_ms());
    if !store.save_webhook_endpoint(scope, &endpoint).await? {
        return Err(not_found(id));
    }
    Ok(endpoint)
}

/// A `webhook.test` message to endpoint `id`, due now.
///
/// # Errors
///
/// [`WebhookError`]; a disabled endpoint is [`WebhookError::Invalid`] (enable it first).
pub async fn send_test(
    delivery: &Delivery,
    store: &Store,
    scope: &Scope,
    id: &str,
) -> Result<Message, WebhookError> {
    let endpoint = get(store, scope, id).await?;
    if endpoint.status == Status::Disabled {
        return Err(WebhookError::Invalid(format!(
            "webhook endpoint {id:?} is disabled; enable it (PATCH {{\"status\": \"enabled\"}}) before sending a test"
        )));
    }
    let message = outbox::Change::Test(&endpoint)
        .message(delivery.now_ms())
        .map_err(WebhookError::Invalid)?;
    if !store.enqueue_webhook_to(scope, id, &message).await? {
        return Err(not_found(id));
    }
    delivery.wake();
    Ok(message)
}

/// Sends message `id` again to the enabled endpoints it was addressed to; how many.
///
/// # Errors
///
/// [`WebhookError`].
pub async fn resend(
    delivery: &Delivery,
    store: &Store,
    scope: &Scope,
    id: &str,
) -> Result<u64, WebhookError> {
    let n = store
        .resend_webhook_message(scope, id, delivery.now_ms())
        .await?
        .ok_or_else(|| {
            let shown: String = id.chars().take(80).collect();
            WebhookError::NotFound(format!("no webhook message {shown:?}"))
        })?;
    delivery.wake();
    Ok(n)
}

/// Sends again every message since `since_ms` that failed to reach endpoint `id`; how many.
///
/// # Errors
///
/// [`WebhookError::Invalid`] for a `since` more than 14 days back or in the future, else as
/// [`get`].
pub async fn recover(
    delivery: &Delivery,
    store: &Store,
    scope: &Scope,
    id: &str,
    since_ms: i64,
) -> Result<u64, WebhookError> {
    let now = delivery.now_ms();
    if since_ms < now.saturating_sub(RECOVER_WINDOW_MS) || since_ms > now {
        return Err(WebhookError::Invalid(format!(
            "since must be within the last 14 days, got {}",
            crate::domain::time::format_ms(since_ms)
        )));
    }
    let endpoint = get(store, scope, id).await?;
    if endpoint.status == Status::Disabled {
        return Err(WebhookError::Invalid(format!(
            "webhook endpoint {id:?} is disabled; enable it (PATCH {{\"status\": \"enabled\"}}) before recovering its messages"
        )));
    }
    let n = store
        .recover_webhook_endpoint(scope, id, since_ms, now)
        .await?
        .ok_or_else(|| not_found(id))?;
    delivery.wake();
    Ok(n)
}
