//! Helpers of the integration tests: sites on disk, servers in process or as the built binary,
//! a real `redis-server`, raw TCP for what an HTTP client will not send.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nudge_rules_server::clock::{Clock, SystemClock};
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::runtime::Server;
use nudge_rules_server::sites::keys::KeyHash;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The request body of the README.
pub const REQUEST: &str =
    r#"{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}"#;

/// The repository's storefront config.
pub const STOREFRONT: &str = include_str!("../../../examples/storefront.json");

/// A well-formed test key, distinct per `n`.
pub fn key(n: u32) -> String {
    format!("sk_test_itKey{n:08}xYzAbCdEf")
}

/// One site of a test: written to a folder by [`write_sites`].
pub struct TestSite {
    pub id: &'static str,
    pub config: String,
    pub rate_limit: u32,
    pub keys: Vec<String>,
    /// More TOML lines of the site's table (`plan = "scale"`).
    pub extra: String,
}

impl TestSite {
    pub fn new(id: &'static str, config: &str, rate_limit: u32, keys: &[String]) -> TestSite {
        TestSite {
            id,
            config: config.to_owned(),
            rate_limit,
            keys: keys.to_vec(),
            extra: String::new(),
        }
    }

    /// A site managed through the API (docs/contract/versions.md): no config file.
    pub fn api_managed(id: &'static str, rate_limit: u32, keys: &[String]) -> TestSite {
        TestSite::new(id, "", rate_limit, keys)
    }

    /// The site with one more TOML line in its table.
    pub fn with(mut self, line: &str) -> TestSite {
        self.extra.push_str(line);
        self.extra.push('\n');
        self
    }
}

/// Writes each site's config (`<id>.json`) and a `sites.toml` into `dir`; returns the latter.
pub fn write_sites(dir: &Path, sites: &[TestSite]) -> PathBuf {
    let mut toml = String::new();
    for site in sites {
        let config_line = if site.config.is_empty() {
            String::new()
        } else {
            std::fs::write(dir.join(format!("{}.json", site.id)), &site.config).unwrap();
            format!("config = \"{}.json\"\n", site.id)
        };
        let hashes: Vec<String> = site
            .keys
            .iter()
            .map(|k| format!("\"{}\"", KeyHash::of_key(k)))
            .collect();
        toml.push_str(&format!(
            "[[site]]\nid = \"{}\"\n{config_line}rate_limit = {}\nkeys = [{}]\n{}\n",
            site.id,
            site.rate_limit,
            hashes.join(", "),
            site.extra
        ));
    }
    let path = dir.join("sites.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// Test options: ephemeral ports, fast reloads, short timeouts.
pub fn options() -> ServeConfig {
    ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        admin_listen: "127.0.0.1:0".parse().unwrap(),
        reload_interval: Duration::from_millis(10),
        header_read_timeout: Duration::from_millis(500),
        body_read_timeout: Duration::from_millis(500),
        drain_timeout: Duration::from_secs(5),
        ..ServeConfig::default()
    }
}

/// Binds and loads an in-process server for the sites file `sites_toml`.
pub async fn start(sites_toml: &Path, options: ServeConfig, clock: Arc<dyn Clock>) -> Server {
    let mut server = bind(sites_toml, options, clock).await;
    server.load().await;
    server
}

/// Binds an in-process server without loading it (it answers 503 until loaded).
pub async fn bind(sites_toml: &Path, options: ServeConfig, clock: Arc<dyn Clock>) -> Server {
    let defs = nudge_rules_server::sites::file::load(sites_toml).unwrap();
    Server::bind(defs, &options, clock).await.unwrap()
}

/// A live key, distinct per `n`.
pub fn live_key(n: u32) -> String {
    format!("sk_live_itKey{n:08}xYzAbCdEf")
}

/// Binds and loads an in-process server for `sites_toml` on the store `store_url`, with a
/// fixed cursor secret.
pub async fn start_with_store(sites_toml: &Path, store_url: &str) -> Server {
    let options = ServeConfig {
        store: Some(store_url.to_owned()),
        cursor_secret: Some(vec![42; 32]),
        ..options()
    };
    start(sites_toml, options, Arc::new(SystemClock::new())).await
}

/// A server with the storefront site (`rate_limit`) and keys `key(1)`, `key(2)`.
pub async fn storefront(dir: &Path, rate_limit: u32) -> Server {
    let sites = write_sites(
        dir,
        &[TestSite::new(
            "storefront",
            STOREFRONT,
            rate_limit,
            &[key(1), key(2)],
        )],
    );
    start(&sites, options(), Arc::new(SystemClock::new())).await
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

pub fn preview_url(addr: SocketAddr) -> String {
    format!("http://{addr}/v1/nudges/preview")
}

/// `POST /v1/nudges/preview` with `key` and a JSON body.
pub async fn preview(
    client: &reqwest::Client,
    addr: SocketAddr,
    key: &str,
    body: &str,
) -> reqwest::Response {
    client
        .post(preview_url(addr))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

/// A header as text ("" when absent).
pub fn header<'r>(response: &'r reqwest::Response, name: &str) -> &'r str {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap())
        .unwrap_or("")
}

/// A header as a number (panics when absent).
pub fn header_u64(response: &reqwest::Response, name: &str) -> u64 {
    header(response, name).parse().unwrap_or_else(|_| {
        panic!(
            "header {name} missing or not a number: {:?}",
            response.headers()
        )
    })
}

/// Now on the real clock, Unix ms (what a storefront's events carry).
pub fn now_ms() -> i64 {
    SystemClock::new().now_ms()
}

/// The current Unix second.
pub fn unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// GET on the admin listener: status and body.
pub async fn admin_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let response = client()
        .get(format!("http://{addr}{path}"))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The value of one sample in a Prometheus text (`name{labels}`), 0 when absent.
pub fn metric(text: &str, sample: &str) -> f64 {
    text.lines()
        .find_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            (name == sample).then(|| value.parse().unwrap())
        })
        .unwrap_or(0.0)
}

/// Writes raw bytes on a new connection and returns what the server sends until it closes the
/// connection (or `wait` passes: then it panics).
pub async fn raw_exchange(addr: SocketAddr, request: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The server may close before reading everything (a refused body): ignore write errors.
    let _ = stream.write_all(request).await;
    let (received, closed) = read_until_close(&mut stream, wait).await;
    assert!(
        closed,
        "the server kept the connection open for {wait:?}; got {received:?}"
    );
    received
}

/// Reads until the peer closes (`true`) or `wait` passes (`false`).
pub async fn read_until_close(stream: &mut TcpStream, wait: Duration) -> (String, bool) {
    let mut received = Vec::new();
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 4096];
    let closed = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Err(_) => break false,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
        }
    };
    (String::from_utf8_lossy(&received).into_owned(), closed)
}

/// The built `nudge-rules-server` binary, started with `args`; stderr goes to a file.
pub struct Binary {
    pub child: Child,
    pub api: SocketAddr,
    pub admin: SocketAddr,
    stdout: Arc<std::sync::Mutex<String>>,
    pub stderr_path: PathBuf,
}

impl Binary {
    pub fn start(args: &[&str], env: &[(&str, &str)], stderr_path: &Path) -> Binary {
        Binary::launch(args, env, stderr_path, true)
    }

    /// `nudge-rules-server worker ARGS`: it prints only its admin address (`api` is
    /// `0.0.0.0:0`).
    pub fn worker(args: &[&str], env: &[(&str, &str)], stderr_path: &Path) -> Binary {
        let args: Vec<&str> = std::iter::once("worker")
            .chain(args.iter().copied())
            .collect();
        Binary::launch(&args, env, stderr_path, false)
    }

    fn launch(args: &[&str], env: &[(&str, &str)], stderr_path: &Path, has_api: bool) -> Binary {
        let stderr = std::fs::File::create(stderr_path).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_nudge-rules-server"));
        command
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .stdin(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut reader = BufReader::new(stdout);
        let stdout_text = Arc::new(std::sync::Mutex::new(String::new()));
        let (mut api, mut admin) = (None, None);
        if !has_api {
            api = "0.0.0.0:0".parse().ok();
        }
        while api.is_none() || admin.is_none() {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                let log = std::fs::read_to_string(stderr_path).unwrap_or_default();
                panic!("the server exited before printing its addresses; stderr:\n{log}");
            }
            let url = |prefix: &str| -> Option<SocketAddr> {
                let rest = line.strip_prefix(prefix)?.trim().strip_prefix("http://")?;
                rest.split(['/', ' ']).next()?.parse().ok()
            };
            api = api.or_else(|| url("API:"));
            admin = admin.or_else(|| url("admin:"));
            stdout_text.lock().unwrap().push_str(&line);
        }
        // Keep reading stdout so the child never blocks on a full pipe.
        let sink = stdout_text.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while reader.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Binary {
            child,
            api: api.unwrap(),
            admin: admin.unwrap(),
            stdout: stdout_text,
            stderr_path: stderr_path.to_owned(),
        }
    }

    /// Waits until `/readyz` answers 200.
    pub async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(r) = client()
                .get(format!("http://{}/readyz", self.admin))
                .send()
                .await
                && r.status() == 200
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the server did not become ready");
    }

    /// Sends SIGTERM to this child (by its process id).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the child to exit; its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("the server did not exit within {within:?}");
    }

    /// What the child printed on stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap()
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A real `redis-server` on a free loopback port, without persistence, stopped on drop.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
}

impl Redis {
    pub fn start() -> Redis {
        let port = free_port();
        Redis::start_on(port)
    }

    pub fn start_on(port: u16) -> Redis {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start redis-server ({e}): the Redis tests need Debian's redis-server; scripts/setup.sh installs it"
                )
            });
        let redis = Redis {
            child: Some(child),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if redis.ping() {
                return redis;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {port} did not answer PING");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn ping(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0u8; 16];
        stream.write_all(b"PING\r\n").is_ok()
            && stream
                .read(&mut buf)
                .map(|n| buf[..n].starts_with(b"+PONG"))
                .unwrap_or(false)
    }

    /// Kills the server (SIGKILL, by its process id) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
