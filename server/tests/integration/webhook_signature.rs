//! Webhook signatures (docs/contract/webhooks.md) checked by an independent verifier: the `standardwebhooks`
//! package of PyPI (pinned and installed by scripts/setup.sh), not by our own code.

use std::process::Command;

use nudge_rules_server::domain::webhook::{Secret, signature_header};

/// Runs the PyPI verifier on one delivery; `Ok(())` when it accepts it, else its message.
pub(crate) fn python_verifies(
    secret: &Secret,
    id: &str,
    timestamp: i64,
    signature: &str,
    body: &str,
) -> Result<(), String> {
    let script = r#"
import sys
from standardwebhooks.webhooks import Webhook
secret, msg_id, timestamp, signature, body = sys.argv[1:6]
headers = {"webhook-id": msg_id, "webhook-timestamp": timestamp, "webhook-signature": signature}
try:
    Webhook(secret).verify(body, headers)
except Exception as e:
    print(f"{type(e).__name__}: {e}")
    sys.exit(1)
"#;
    let out = Command::new("python3")
        .args([
            "-c",
            script,
            &secret.to_string(),
            id,
            &timestamp.to_string(),
            signature,
            body,
        ])
        .output()
        .map_err(|e| format!("python3 did not run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !said.contains("ModuleNotFoundError"),
        "the standardwebhooks package is missing: scripts/setup.sh installs it\n{said}"
    );
    Err(said)
}

fn now_s() -> i64 {
    crate::common::now_ms() / 1000
}

#[test]
fn the_independent_verifier_accepts_our_signatures_and_refuses_an_altered_byte() {
    let secret = Secret::generate().unwrap();
    let id = "msg_2yBq1oZbJm3Q8aVt";
    let body = r#"{"id":"msg_2yBq1oZbJm3Q8aVt","type":"webhook.test","created_at":"2026-11-27T00:00:00.000Z","data":{}}"#;
    let t = now_s();
    let header = signature_header([&secret], id, t, body.as_bytes());
    python_verifies(&secret, id, t, &header, body).unwrap();
    // One byte of the body, the id or the timestamp changed: refused.
    let altered = body.replacen("test", "tesT", 1);
    assert!(python_verifies(&secret, id, t, &header, &altered).is_err());
    assert!(python_verifies(&secret, "msg_2yBq1oZbJm3Q8aVu", t, &header, body).is_err());
    assert!(python_verifies(&secret, id, t + 1, &header, body).is_err());
    // Another secret: refused.
    let other = Secret::generate().unwrap();
    assert!(python_verifies(&other, id, t, &header, body).is_err());
}

#[test]
fn during_a_rotation_each_secret_verifies_on_its_own() {
    let (new, old) = (Secret::generate().unwrap(), Secret::generate().unwrap());
    let id = "msg_rotation1";
    let body = r#"{"id":"msg_rotation1","type":"nudge.shown","created_at":"2026-11-27T00:00:00.000Z","data":{"nudge_id":"nudg_1"}}"#;
    let t = now_s();
    let header = signature_header([&new, &old], id, t, body.as_bytes());
    assert_eq!(header.split(' ').count(), 2);
    python_verifies(&new, id, t, &header, body).unwrap();
    python_verifies(&old, id, t, &header, body).unwrap();
    let stranger = Secret::generate().unwrap();
    assert!(python_verifies(&stranger, id, t, &header, body).is_err());
}
