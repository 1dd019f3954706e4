//! Webhook delivery (docs/contract/webhooks.md "Delivery", "Safe by construction", "Many instances"): the
//! worker that claims due deliveries from the outbox and makes each attempt.
//!
//! - The HTTP client is reqwest's: 15 s for the whole attempt (connect, request, response
//!   body), no redirects (a 3xx is a failure, its `Location` never fetched), no proxy, TLS by
//!   rustls with the Mozilla roots.
//! - Its resolver is [`CheckedResolver`]: every address a name resolves to is judged by the
//!   [`Policy`], and the connection goes only to the addresses judged (no second lookup that a
//!   rebinding name could answer differently). A URL naming an address skips resolvers, so
//!   [`Policy::check_url`] judges it before each attempt.
//! - A response body is read to at most [`MAX_RESPONSE_BYTES`]; its first 4 KiB are logged.
//! - Claims last [`LEASE`]: longer than an attempt can take, so a claim outlives its attempt
//!   only when its instance died or stalled, and the delivery is then due again.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::clock::Clock;
use crate::domain::webhook::attempt::{
    ATTEMPT_TIMEOUT, Answer, AttemptResult, Due, HttpStatus, LOGGED_BODY_BYTES, Verdict, judge,
};
use crate::domain::webhook::health::DISABLE_AFTER_MS;
use crate::domain::webhook::signature::{
    HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, signature_header,
};
use crate::domain::webhook::{Policy, Refused, Schedule};
use crate::metrics::Metrics;
use crate::store::Store;
use crate::tasks::Tasks;

/// How long a claim lasts: the attempt's 15 s and 5 s to write its result.
pub const LEASE: Duration = Duration::from_secs(20);

/// The most of a response body read (docs/contract/webhooks.md: 64 KiB); the rest is never read.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Attempts in flight per instance, all endpoints together.
const MAX_ATTEMPTS_IN_FLIGHT: usize = 64;

/// How long the worker sleeps between two looks at the outbox: a message (here or on another
/// instance) or a retry falls due within it. Each finished attempt, test, resend and recover
/// made here wakes it at once, so a backlog drains as fast as attempts finish.
const POLL: Duration = Duration::from_millis(250);

/// How long the finisher waits, after a result comes, for the other attempts of its claim
/// (the attempts to one endpoint claimed together, which mostly end together), so that their
/// results are written, and their places claimed again, by one visit to the store instead of
/// one visit each: a visit is a transaction of about ten statements whatever it carries
/// (under the relay's load, 3.6 results a visit without the wait, 8 with it;
/// docs/PERFORMANCE.md "Webhook figures"). A result whose claim has nothing else out is
/// written at once.
const GATHER: Duration = Duration::from_millis(10);

/// How many times as long as its last visit took the finisher waits before the next one while
/// event batches are being written (`Store::writing_batches`): its visits then hold the store
/// at most a quarter of the time, and the relay, which visitors' browsers wait on, goes first
/// (docs/contract/webhooks.md: the relay keeps at least 0.8x of its speed with an endpoint). The attempts it
/// launched run meanwhile. With no batch being written it does not wait, so deliveries from an
/// otherwise idle store go at full speed. Under the relay's full load on PostgreSQL each
/// delivery cost about 0.5 ms of the machine's CPU (the database's, the client's, the
/// receiver's), and at the worker's full pace the deliveries took 7 to 9 points of the relay's
/// ratio (docs/PERFORMANCE.md "Webhook figures").
const GIVE_WAY: u32 = 3;

/// The longest the finisher waits after a visit to give way ([`GIVE_WAY`]).
const GIVE_WAY_MAX: Duration = Duration::from_millis(100);

/// The delivery side of webhooks: the policy, the schedule, the client and the server's clock.
pub struct Delivery {
    policy: Arc<Policy>,
    schedule: Schedule,
    client: reqwest::Client,
    clock: Arc<dyn Clock>,
    wake: Notify,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("policy", &self.policy)
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

/// The resolver of every attempt: a name's addresses, each judged by the policy; one refused
/// address refuses the name.
#[derive(Debug)]
pub struct CheckedResolver {
    policy: Arc<Policy>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| {
                    Box::new(Refused::Unresolved {
                        host: host.clone(),
                        reason: e.to_string(),
                    }) as Box<dyn std::error::Error + Send + Sync>
                })?
                .collect();
            let checked = policy
                .check_resolved(&host, found)
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            let addrs: Addrs = Box::new(checked.into_iter());
            Ok(addrs)
        })
    }
}

impl Delivery {
    /// The delivery side with `policy` and `schedule`, reading `clock` (the server's) for
    /// every time it claims, attempts and schedules at.
    ///
    /// # Errors
    ///
    /// A message when the HTTP client cannot be built (no TLS roots).
    pub fn new(
        policy: Policy,
        schedule: Schedule,
        clock: Arc<dyn Clock>,
    ) -> Result<Delivery, String> {
        let policy = Arc::new(policy);
        let client = reqwest::Client::builder()
            .timeout(ATTEMPT_TIMEOUT)
            .connect_timeout(ATTEMPT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!("nudge-rules-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(CheckedResolver {
                policy: Arc::clone(&policy),
            }))
            .build()
            .map_err(|e| format!("the webhook client: {e}"))?;
        Ok(Delivery {
            policy,
            schedule,
            client,
            clock,
            wake: Notify::new(),
        })
    }

    /// Now on the server's clock, Unix ms (endpoint management reads it too).
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The URL policy (registration checks with it too).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Judges an endpoint URL as an attempt would: the URL, then every address its name
    /// resolves to (docs/contract/webhooks.md: refused at registration before any connection).
    ///
    /// # Errors
    ///
    /// [`Refused`] naming the URL, the host, the address and its range.
    pub async fn check_endpoint_url(&self, url: &str) -> Result<String, Refused> {
        let target = self.policy.check_url(url)?;
        if let Some(name) = &target.name {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), target.port))
                .await
                .map_err(|e| Refused::Unresolved {
                    host: name.clone(),
                    reason: e.to_string(),
                })?
                .collect();
            self.policy.check_resolved(name, found)?;
        }
        Ok(target.url.to_string())
    }

    /// Tells the worker to look at the outbox now (a message was written here).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// The worker: claims due deliveries and attempts each on a task of `tasks`, until the
    /// drain (attempts in flight are dropped with it; their claims end with the lease and they
    /// are due again, on this instance after a restart or on another).
    pub async fn run(self: Arc<Self>, store: Store, tasks: Tasks, metrics: Arc<Metrics>) {
        let (results, finished) = tokio::sync::mpsc::unbounded_channel();
        let launcher = Launcher {
            delivery: Arc::clone(&self),
            permits: Arc::new(Semaphore::new(MAX_ATTEMPTS_IN_FLIGHT)),
            out: Arc::default(),
            tasks: tasks.clone(),
            results,
        };
        tasks.spawn_poller(Arc::clone(&self).finisher(
            store.clone(),
            finished,
            launcher.clone(),
            metrics,
        ));
        loop {
            let room = launcher.permits.available_permits();
            if room > 0 {
                match store
                    .claim_webhook_deliveries(self.now_ms(), lease_ms(), room)
                    .await
                {
                    Ok(claimed) => launcher.launch(claimed).await,
                    Err(e) => {
                        tracing::warn!(error = %e, "webhooks: cannot claim due deliveries; trying again")
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = self.wake.notified() => {}
            }
        }
    }

    /// Writes the attempts' results as they come, those of attempts that end together
    /// ([`GATHER`]) in one transaction (one commit, so a backlog's deliveries cost the store's
    /// writer little), and in the same transaction claims as many due deliveries as the
    /// results freed places (`finish_webhook_attempts_and_claim`), so a backlog drains without
    /// a claim of its own per result. If that fails, the results alone are tried again until
    /// the claims' lease is nearly over (then the deliveries are due again anyway). While
    /// event batches are being written, it gives way to them after each visit ([`GIVE_WAY`]).
    async fn finisher(
        self: Arc<Self>,
        store: Store,
        mut finished: tokio::sync::mpsc::UnboundedReceiver<(AttemptResult, OwnedSemaphorePermit)>,
        launcher: Launcher,
        metrics: Arc<Metrics>,
    ) {
        let disable_after_ms = DISABLE_AFTER_MS;
        while let Some(first) = finished.recv().await {
            // The results waiting, and while an attempt of their claims is still out, those
            // that come within GATHER.
            let deadline = tokio::time::Instant::now() + GATHER;
            let mut batch = Vec::new();
            let mut next = Some(first);
            while let Some(more) = next.take() {
                launcher.out.back(&more.0.due.claim);
                batch.push(more);
                if batch.len() >= MAX_ATTEMPTS_IN_FLIGHT {
                    break;
                }
                next = match finished.try_recv() {
                    Ok(more) => Some(more),
                    Err(_) if batch.iter().any(|(r, _)| launcher.out.any(&r.due.claim)) => {
                        tokio::time::timeout_at(deadline, finished.recv())
                            .await
                            .ok()
                            .flatten()
                    }
                    Err(_) => None,
                };
            }
            let results: Vec<AttemptResult> = batch.iter().map(|(r, _)| r.clone()).collect();
            for r in &results {
                let outcome = r.verdict.outcome();
                metrics
                    .webhook_attempts
                    .get_or_create(&crate::metrics::OutcomeLabels { outcome })
                    .inc();
            }
            // The places this batch holds are free once its results are written.
            let room = launcher.permits.available_permits() + batch.len();
            let mut claimed = Vec::new();
            let mut disabled = Vec::new();
            let visit_started = Instant::now();
            // One visit to the writer: the results, then claims for the places they free. If
            // that fails, the results alone (a claim that cannot be made must not keep them
            // unwritten), and the claims at the next look.
            match store
                .finish_webhook_attempts_and_claim(
                    &results,
                    disable_after_ms,
                    self.now_ms(),
                    lease_ms(),
                    room,
                )
                .await
            {
                Ok(visited) => (disabled, claimed) = visited,
                Err(e) => {
                    tracing::warn!(error = %e, "webhooks: cannot record attempts and claim; recording them alone");
                    for _ in 0..5 {
                        match store
                            .finish_webhook_attempts(&results, disable_after_ms)
                            .await
                        {
                            Ok(gone) => {
                                disabled = gone;
                                break;
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "webhooks: cannot record attempts; trying again");
                                tokio::time::sleep(Duration::from_secs(1)).await;
                            }
                        }
                    }
                }
            }
            let visit_took = visit_started.elapsed();
            for endpoint in disabled {
                tracing::warn!(endpoint = %endpoint, "webhook endpoint disabled");
            }
            drop(batch);
            if claimed.is_empty() {
                self.wake();
            } else {
                launcher.launch(claimed).await;
            }
            if store.writing_batches() {
                tokio::time::sleep(visit_took.saturating_mul(GIVE_WAY).min(GIVE_WAY_MAX)).await;
            }
        }
    }

    /// One attempt of `due`: signed, sent, its answer read and judged
    /// ([`judge`], [`Verdict::after`]: docs/contract/webhooks.md "Delivery"). A delivery whose stored secret does
    /// not read is not sent: the attempt fails with the reason, logged as an error.
    pub async fn attempt(&self, due: Due) -> AttemptResult {
        let attempted_at_ms = self.now_ms();
        let started = Instant::now();
        let mut answer = match self.send(&due, attempted_at_ms / 1000).await {
            Ok(answer) => answer,
            Err(error) => Answer {
                error: Some(error),
                ..Answer::default()
            },
        };
        answer.took = started.elapsed();
        let verdict = Verdict::after(
            judge(&answer),
            due.attempt,
            attempted_at_ms,
            &self.schedule,
            jitter(),
        );
        AttemptResult {
            due,
            verdict,
            attempted_at_ms,
            duration_ms: i64::try_from(answer.took.as_millis()).unwrap_or(i64::MAX),
            status: answer.status,
            error: answer.error,
            body: answer.body,
        }
    }

    /// Signs and sends `due`, and reads the answer (its `took` is left for the caller).
    async fn send(&self, due: &Due, timestamp_s: i64) -> Result<Answer, String> {
        let secrets = due.secrets.as_ref().map_err(|e| {
            tracing::error!(endpoint = %due.endpoint_id, message = %due.message_id, error = %e, "webhook attempt not sent: a stored signing secret does not read");
            e.to_string()
        })?;
        self.policy.check_url(&due.url).map_err(|e| e.to_string())?;
        let signature =
            signature_header(secrets, &due.message_id, timestamp_s, due.body.as_bytes());
        let mut response = self
            .client
            .post(&due.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(HEADER_ID, &due.message_id)
            .header(HEADER_TIMESTAMP, timestamp_s.to_string())
            .header(HEADER_SIGNATURE, signature)
            .body(due.body.clone())
            .send()
            .await
            .map_err(|e| describe(&e))?;
        let status = HttpStatus(response.status().as_u16());
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut body: Vec<u8> = Vec::new();
        let mut error = None;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = MAX_RESPONSE_BYTES.saturating_sub(body.len());
                    body.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
                    if body.len() >= MAX_RESPONSE_BYTES {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    error = Some(format!("reading the response body: {}", describe(&e)));
                    break;
                }
            }
        }
        let logged = String::from_utf8_lossy(
            body.get(..LOGGED_BODY_BYTES.min(body.len()))
                .unwrap_or_default(),
        )
        .into_owned();
        Ok(Answer {
            status: Some(status),
            error,
            retry_after,
            body: logged,
            took: Duration::ZERO,
        })
    }
}

/// [`LEASE`] in milliseconds.
fn lease_ms() -> i64 {
    i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX)
}

/// Starts claimed deliveries' attempts, each on a task of the tracker holding one of the
/// instance's places; its result goes to the finisher.
#[derive(Clone)]
struct Launcher {
    delivery: Arc<Delivery>,
    permits: Arc<Semaphore>,
    out: Arc<Out>,
    tasks: Tasks,
    results: tokio::sync::mpsc::UnboundedSender<(AttemptResult, OwnedSemaphorePermit)>,
}

impl Launcher {
    /// Attempts each of `claimed`, waiting for a place for each.
    async fn launch(&self, claimed: Vec<Due>) {
        for due in claimed {
            let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
                return;
            };
            self.out.sent(&due.claim);
            let (delivery, results) = (Arc::clone(&self.delivery), self.results.clone());
            self.tasks.spawn_poller(async move {
                let result = delivery.attempt(due).await;
                let _ = results.send((result, permit));
            });
        }
    }
}

/// The attempts out (launched, their result not yet at the finisher), per claim: the
/// attempts claimed together, whose results the finisher waits for ([`GATHER`]).
#[derive(Default)]
struct Out(std::sync::Mutex<HashMap<String, usize>>);

impl Out {
    fn count(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// An attempt of `claim` launched.
    fn sent(&self, claim: &str) {
        *self.count().entry(claim.to_owned()).or_default() += 1;
    }

    /// An attempt of `claim` back at the finisher.
    fn back(&self, claim: &str) {
        let mut count = self.count();
        if let Some(n) = count.get_mut(claim) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                count.remove(claim);
            }
        }
    }

    /// Whether an attempt of `claim` is still out.
    fn any(&self, claim: &str) -> bool {
        self.count().contains_key(claim)
    }
}

/// A failed request in words: time-out, refused address, connection, with reqwest's causes.
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("timed out after {} s", ATTEMPT_TIMEOUT.as_secs());
    }
    let mut text = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(refused) = s.downcast_ref::<Refused>() {
            return format!("refused: {refused}");
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A uniform draw in [-1, 1] (the schedule's jitter); 0 when the system has no random source.
fn jitter() -> f64 {
    let mut bytes = [0u8; 4];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.0;
    }
    f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX) * 2.0 - 1.0
}

#[cfg(test)]
mod tests {
    use super::Out;

    #[test]
    fn a_claim_is_out_until_each_of_its_attempts_is_back() {
        let out = Out::default();
        out.sent("clm_a");
        out.sent("clm_a");
        out.sent("clm_b");
        assert!(out.any("clm_a") && out.any("clm_b"));
        out.back("clm_a");
        assert!(out.any("clm_a"), "one of clm_a's two attempts is still out");
        out.back("clm_a");
        assert!(!out.any("clm_a"));
        assert!(out.any("clm_b"));
        // A result of an attempt never counted (a test message's, say) changes nothing.
        out.back("clm_c");
        out.back("clm_a");
        assert!(!out.any("clm_c") && !out.any("clm_a") && out.any("clm_b"));
    }
}
