//! `nudge-rules-server`: the server (docs/contract/: server.md, read-api.md, relay.md, store.md, backtest.md, versions.md, caps.md): the command line, read into the runtime's
//! options. See docs/SERVER.md; the library's layout is in lib.rs.

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

/// mimalloc for every allocation of the server: a list page allocates per row (the driver's
/// rows, their strings), and glibc's malloc was a tenth of a list request's CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use nudge_rules_server::app::demo;
use nudge_rules_server::app::import::{self, ImportOptions};
use nudge_rules_server::config::{self, ServeConfig};
use nudge_rules_server::domain::event::{Mode, Scope};
use nudge_rules_server::domain::retention::{Plan, Retention};
use nudge_rules_server::limiter::SystemClock;
use nudge_rules_server::runtime::Server;
use nudge_rules_server::sites::def::{ConfigSource, SiteDef};
use nudge_rules_server::sites::keys::{KeyHash, KeyKind, key_kind};
use nudge_rules_server::store::Store;
use nudge_rules_server::{DEMO_ALLOWED_ORIGINS, DEMO_KEY, DEMO_SITE_KEY, http, sites};

/// The nudge-rules server: the preview, the relay, the read API, backtests, config versions and
/// the uplift report for many sites, with API keys, an exact rolling-minute rate limit per key,
/// hot config reload and an admin listener.
#[derive(Parser)]
#[command(
    name = "nudge-rules-server",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Print the sites-file line for an API key (its SHA-256 hash); KEY `-` reads it from
    /// stdin, which keeps it out of the shell history.
    HashKey {
        /// The key: sk_live_, sk_test_, pk_live_ or pk_test_ and at least 16 letters or digits.
        key: String,
    },
    /// Import recorded sessions (API document 2.2: one per line, or an array) into the store,
    /// as events, so every derived field is recomputed; running it twice changes nothing.
    Import(ImportArgs),
}

#[derive(Args)]
struct ImportArgs {
    /// The sites file (the site's config gives `case_sensitive`).
    #[arg(long, value_name = "FILE")]
    sites: PathBuf,
    /// The store: sqlite:PATH or postgres://...
    #[arg(long, value_name = "STORE")]
    store: String,
    /// The site the sessions belong to.
    #[arg(long, value_name = "ID")]
    site: String,
    /// The mode the sessions are stored in.
    #[arg(long, value_name = "MODE", value_parser = ["test", "live"])]
    mode: String,
    /// Move every time so the latest event is now (sample data that would otherwise fall
    /// outside the retention window); reads FILE twice, so not with stdin.
    #[arg(long)]
    shift_to_now: bool,
    /// The sessions (JSONL, streamed; or a JSON array up to 64 MiB, read whole); `-` reads
    /// stdin.
    file: PathBuf,
}

#[derive(Args)]
struct ServeArgs {
    /// The sites file (TOML): [[site]] tables with id, config, rate_limit, keys; reloaded when
    /// it changes (a file that does not parse keeps the last valid one).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "demo",
        conflicts_with = "demo"
    )]
    sites: Option<PathBuf>,
    /// Serve one demo site with the embedded storefront config and a printed test key
    /// (loopback addresses only).
    #[arg(long)]
    demo: bool,
    /// The public listener.
    #[arg(long, value_name = "ADDR", default_value_t = config::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The admin listener (/healthz, /readyz, /metrics, /openapi.json, /sites); no
    /// authentication, so keep it private.
    #[arg(long, value_name = "ADDR", default_value_t = config::DEFAULT_ADMIN_LISTEN)]
    admin_listen: SocketAddr,
    /// Share rate limits through this Redis (redis://host:port[/db]); falls back to a local
    /// limiter while it is unreachable.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// How long one Redis call may take before the request is decided by this instance's local
    /// limiter, in milliseconds (1 to 60,000).
    #[arg(long, value_name = "MS", default_value_t = config::DEFAULT_REDIS_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    redis_timeout_ms: u64,
    /// How often the sites file, config files and the store's published config versions
    /// (docs/contract/versions.md) are checked for changes, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = config::DEFAULT_RELOAD_INTERVAL_MS, value_parser = clap::value_parser!(u64).range(10..))]
    reload_interval_ms: u64,
    /// How long a client may take to send a request head, in milliseconds (also the idle
    /// keep-alive timeout).
    #[arg(long, value_name = "MS", default_value_t = config::DEFAULT_HEADER_READ_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    header_read_timeout_ms: u64,
    /// How long a request body may pause between chunks before 408, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = config::DEFAULT_BODY_READ_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    body_read_timeout_ms: u64,
    /// How long a whole request body may take to arrive before 408, in milliseconds (however
    /// slowly it trickles).
    #[arg(long, value_name = "MS", default_value_t = config::DEFAULT_BODY_TOTAL_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    body_total_timeout_ms: u64,
    /// The most connections the public listener keeps open; more are answered 503 and closed.
    #[arg(long, value_name = "N", default_value_t = config::DEFAULT_MAX_CONNECTIONS as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// How long in-flight requests may take to finish after SIGTERM, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = config::DEFAULT_DRAIN_TIMEOUT_MS)]
    drain_timeout_ms: u64,
    /// The store of sessions and nudge events: sqlite:PATH (one machine) or postgres://...
    /// (several instances). Default: sqlite:nudge-rules.db beside the sites file; with --demo,
    /// a fresh file in the temp folder.
    #[arg(long, value_name = "STORE")]
    store: Option<String>,
    /// A file whose bytes (at least 32; surrounding whitespace ignored) sign page cursors; give
    /// every instance the same. Without it, a random secret: cursors die with the process.
    #[arg(long, value_name = "FILE")]
    secret_file: Option<PathBuf>,
    /// Also serve POST /v1/_bench/constant: the same pipeline answering a constant body (the
    /// load benchmark's baseline).
    #[arg(long)]
    constant_route: bool,
    /// The webhook retry delays (docs/contract/webhooks.md), comma-separated, each a whole number and a unit (ms,
    /// s, m, h, d). Default: 5s,5m,30m,2h,5h,10h,10h (8 attempts). Tests compress it.
    #[arg(long, value_name = "DELAYS")]
    webhook_schedule: Option<nudge_rules_server::domain::webhook::Schedule>,
    /// Accept http: webhook endpoint URLs as well as https: (tests, private networks).
    #[arg(long)]
    webhook_allow_http: bool,
    /// Let webhook endpoints reach this address range though it is loopback, private,
    /// link-local, CGNAT or unique-local (e.g. 127.0.0.0/8, 10.0.0.0/8); repeat for several.
    #[arg(long, value_name = "CIDR")]
    webhook_allow_private: Vec<ipnet::IpNet>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::HashKey { key }) => hash_key(&key),
        Some(Command::Import(args)) => run_import(&args),
        None => serve(cli.serve),
    }
}

fn hash_key(key: &str) -> ExitCode {
    let key = if key == "-" {
        let mut line = String::new();
        if let Err(e) = std::io::stdin().lock().read_line(&mut line) {
            eprintln!("nudge-rules-server hash-key: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        line.trim().to_owned()
    } else {
        key.to_owned()
    };
    let Some(kind) = key_kind(&key) else {
        eprintln!(
            "nudge-rules-server hash-key: not a key: expected sk_live_, sk_test_ (secret) or pk_live_, pk_test_ (publishable) followed by at least 16 letters or digits"
        );
        return ExitCode::from(2);
    };
    let field = match kind {
        KeyKind::Secret => "keys",
        KeyKind::Publishable => "site_keys",
    };
    let hash = KeyHash::of_key(&key);
    println!("{field} = [\"{hash}\"]");
    eprintln!(
        "(add the quoted hash to the site's {field}; log lines will name this key {})",
        hash.log_id()
    );
    ExitCode::SUCCESS
}

fn serve(args: ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();

    let defs = if args.demo {
        if !(args.listen.ip().is_loopback() && args.admin_listen.ip().is_loopback()) {
            eprintln!(
                "nudge-rules-server: --demo has a public test key; it listens on loopback addresses only"
            );
            return ExitCode::from(2);
        }
        vec![SiteDef {
            id: "demo".to_owned(),
            // Managed through the API, so the editor can publish to it (docs/contract/versions.md); its test
            // mode starts at version 1, the embedded storefront config.
            source: ConfigSource::Store,
            allowed_origins: DEMO_ALLOWED_ORIGINS
                .iter()
                .map(|o| (*o).to_owned())
                .collect(),
            rate_limit: sites::def::DEFAULT_RATE_LIMIT,
            keys: vec![KeyHash::of_key(DEMO_KEY)],
            site_keys: vec![KeyHash::of_key(DEMO_SITE_KEY)],
            plan: Plan::default(),
            retention: Retention {
                days: Plan::default().default_days(),
            },
        }]
    } else {
        let file = args.sites.clone().unwrap_or_default();
        match sites::file::load(&file) {
            Ok(defs) => defs,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    };
    let store = match (&args.store, args.demo) {
        (Some(store), _) => store.clone(),
        (None, true) => {
            remove_abandoned_demo_stores();
            let path = demo_store_path();
            remove_sqlite_files(&path);
            format!("sqlite:{}", path.display())
        }
        (None, false) => config::default_store_url(args.sites.as_deref()),
    };
    let cursor_secret = match &args.secret_file {
        None => None,
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => Some(bytes.trim_ascii().to_vec()),
            Err(e) => {
                eprintln!("nudge-rules-server: --secret-file {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
    };
    let options = ServeConfig {
        store: Some(store),
        cursor_secret,
        purge_interval: config::DEFAULT_PURGE_INTERVAL,
        listen: args.listen,
        admin_listen: args.admin_listen,
        redis_url: args.redis.clone(),
        redis_timeout: Duration::from_millis(args.redis_timeout_ms),
        header_read_timeout: Duration::from_millis(args.header_read_timeout_ms),
        body_read_timeout: Duration::from_millis(args.body_read_timeout_ms),
        body_total_timeout: Duration::from_millis(args.body_total_timeout_ms),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        drain_timeout: Duration::from_millis(args.drain_timeout_ms),
        reload_interval: Duration::from_millis(args.reload_interval_ms),
        constant_route: args.constant_route,
        webhook_delays: args.webhook_schedule.as_ref().map(|s| s.delays().to_vec()),
        // The demo listens on the loopback only: a receiver beside it may be http: on the
        // loopback (docs/WEBHOOKS.md).
        webhook_allow_http: args.webhook_allow_http || args.demo,
        webhook_allow_private: if args.demo {
            let mut ranges = args.webhook_allow_private.clone();
            ranges.extend(
                config::DEMO_WEBHOOK_RANGES
                    .iter()
                    .filter_map(|r| r.parse::<ipnet::IpNet>().ok()),
            );
            ranges
        } else {
            args.webhook_allow_private.clone()
        },
        sites_file: args.sites.clone().filter(|_| !args.demo),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("nudge-rules-server: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(defs, options, args.demo))
}

async fn run(defs: Vec<SiteDef>, options: ServeConfig, demo: bool) -> ExitCode {
    let mut termination = Termination::listen();
    let site_count = defs.len();
    let mut server = match Server::bind(defs, &options, Arc::new(SystemClock::new())).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("nudge-rules-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    if demo && let Some(store) = &server.state().store {
        if let Err(e) = demo::publish_config(store).await {
            eprintln!("nudge-rules-server: demo config: {e}");
            return ExitCode::FAILURE;
        }
        match demo::import_sessions(store).await {
            Ok(n) => tracing::info!(
                sessions = n,
                "demo sessions imported in test mode, moved into the last 30 days"
            ),
            Err(e) => {
                eprintln!("nudge-rules-server: demo sessions: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let api_url = format!(
        "http://{}{}",
        server.api_addr(),
        http::routes::preview::PREVIEW_PATH
    );
    let admin_url = format!("http://{}", server.admin_addr());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "API:   {api_url}");
    let _ = writeln!(
        out,
        "admin: {admin_url} (/healthz /readyz /metrics /openapi.json /sites)"
    );
    let limiter = match &options.redis_url {
        Some(_) => "shared through Redis",
        None => "in this process",
    };
    let _ = writeln!(out, "{site_count} site(s); rate limits {limiter}");
    if demo {
        let _ = writeln!(
            out,
            "demo site: the embedded storefront config as version 1, managed through the API; test key {DEMO_KEY} (every endpoint), publishable key {DEMO_SITE_KEY} (the relay only)"
        );
        let base = format!("http://{}", server.api_addr());
        let _ = writeln!(
            out,
            "relay: POST {base}{} with the publishable key {DEMO_SITE_KEY} (Authorization: Bearer, or the body's site_key)",
            http::routes::events::EVENTS_PATH
        );
        let _ = writeln!(
            out,
            "sessions: curl -s '{base}/v1/sessions?limit=2' -H 'Authorization: Bearer {DEMO_KEY}'"
        );
        let _ = writeln!(
            out,
            "try: curl -s {api_url} -H 'Authorization: Bearer {DEMO_KEY}' -H 'Content-Type: application/json' -d '{{\"session_state\":{{\"intent_score\":82,\"page_url\":\"/products/linen-shirt\",\"idle_ms\":9000}}}}'"
        );
    }
    let _ = out.flush();
    drop(out);

    tokio::select! {
        () = server.load() => {
            tracing::info!("ready");
            termination.recv().await;
        }
        () = termination.recv() => {}
    }
    server.shutdown().await;
    if demo
        && options
            .store
            .as_deref()
            .is_some_and(|s| s.ends_with(&*demo_store_path().to_string_lossy()))
    {
        remove_sqlite_files(&demo_store_path());
    }
    ExitCode::SUCCESS
}

/// The start of a demo store's file name; the process id and `.db` follow.
const DEMO_STORE_PREFIX: &str = "nudge-rules-demo-";

/// The demo's store: a file of this process in the temp folder, removed at exit.
fn demo_store_path() -> PathBuf {
    std::env::temp_dir().join(format!("{DEMO_STORE_PREFIX}{}.db", std::process::id()))
}

/// Removes the demo stores (with their `-wal` and `-shm` files) of demo processes that are
/// gone. `--demo` removes its own at a clean exit, but a process that was killed (SIGKILL, a
/// crash) leaves it in the temp folder. A process counts as gone when `/proc/PID` does not
/// exist, so this runs on Linux only; elsewhere nothing is removed.
fn remove_abandoned_demo_stores() {
    let proc_dir = std::path::Path::new("/proc");
    if !proc_dir.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, suffix)) = name
            .to_str()
            .and_then(|name| name.strip_prefix(DEMO_STORE_PREFIX))
            .and_then(|rest| rest.split_once(".db"))
        else {
            continue;
        };
        let is_pid = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
        if is_pid && matches!(suffix, "" | "-wal" | "-shm") && !proc_dir.join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn remove_sqlite_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
}

/// `nudge-rules-server import`: exit 0 when every record was imported, 1 when some could not
/// be read (the others are imported), 2 for bad arguments or an unreachable store.
fn run_import(args: &ImportArgs) -> ExitCode {
    let specs = match sites::file::load(&args.sites) {
        Ok(specs) => specs,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let Some(site) = specs.iter().find(|s| s.id == args.site) else {
        let ids: Vec<&str> = specs.iter().map(|s| s.id.as_str()).collect();
        eprintln!(
            "nudge-rules-server import: --site {:?} is not in {}; its sites are {}",
            args.site,
            args.sites.display(),
            ids.join(", ")
        );
        return ExitCode::from(2);
    };
    // An API-managed site's config is in the store: its events are keyed case-insensitively
    // (docs/contract/config.md's default) whatever a later version says; only derived path keys depend on it.
    let case_sensitive = match &site.source {
        ConfigSource::File(path) => std::fs::read_to_string(path).ok(),
        ConfigSource::Embedded(text) => Some((*text).to_owned()),
        ConfigSource::Store => None,
    }
    .and_then(|text| nudge_rules::Engine::compile(&text).ok())
    .is_some_and(|engine| engine.config().case_sensitive);
    let from_stdin = args.file.as_os_str() == "-";
    let open = || -> Result<Box<dyn BufRead>, ExitCode> {
        if from_stdin {
            return Ok(Box::new(std::io::stdin().lock()));
        }
        match std::fs::File::open(&args.file) {
            Ok(file) => Ok(Box::new(std::io::BufReader::with_capacity(1 << 20, file))),
            Err(e) => {
                eprintln!(
                    "nudge-rules-server import: cannot read {}: {e}",
                    args.file.display()
                );
                Err(ExitCode::from(2))
            }
        }
    };
    let total_bytes = (!from_stdin)
        .then(|| std::fs::metadata(&args.file).ok())
        .flatten()
        .map(|m| m.len());
    let now = nudge_rules_server::domain::time::now_ms();
    let shift_ms = if args.shift_to_now {
        if from_stdin {
            eprintln!(
                "nudge-rules-server import: --shift-to-now reads the file twice (its latest time first); give a file, not stdin"
            );
            return ExitCode::from(2);
        }
        let input = match open() {
            Ok(input) => input,
            Err(code) => return code,
        };
        match import::latest_ms(input) {
            Ok(latest) => latest.map_or(0, |latest| now.saturating_sub(latest)),
            Err(e) => {
                eprintln!(
                    "nudge-rules-server import: cannot read {}: {e}",
                    args.file.display()
                );
                return ExitCode::from(2);
            }
        }
    } else {
        0
    };
    let input = match open() {
        Ok(input) => input,
        Err(code) => return code,
    };
    let scope = Scope {
        site: site.id.clone(),
        mode: match Mode::parse(&args.mode) {
            Ok(mode) => mode,
            Err(e) => {
                eprintln!("nudge-rules-server import: --mode: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("nudge-rules-server: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = std::time::Instant::now();
    let result = runtime.block_on(async {
        let store = Store::open(&args.store).await?;
        let options = ImportOptions {
            case_sensitive,
            shift_ms,
            visible_from_ms: Some(site.retention.visible_from_ms(now)),
        };
        let mut last_line = std::time::Instant::now();
        let (mut last, mut printed) = (import::ImportProgress::default(), None);
        let mut progress = |p: import::ImportProgress| {
            last = p;
            if last_line.elapsed() >= Duration::from_secs(1) {
                last_line = std::time::Instant::now();
                printed = Some(p);
                eprintln!(
                    "{}",
                    import::progress_line(p, total_bytes, started.elapsed())
                );
            }
        };
        let report = import::import_reader(&store, &scope, input, &options, &mut progress).await;
        if printed != Some(last) {
            eprintln!(
                "{}",
                import::progress_line(last, total_bytes, started.elapsed())
            );
        }
        report
    });
    match result {
        Ok(report) => {
            for bad in &report.bad_records {
                eprintln!("  {bad}");
            }
            if report.outside_retention > 0 {
                eprintln!(
                    "warning: {} of {} sessions start before site {:?}'s retention window ({} days): the read API does not show them, and the purge deletes them once they are {} days old (at start and hourly); --shift-to-now moves sample data so its latest event is now",
                    report.outside_retention,
                    report.sessions,
                    scope.site,
                    site.retention.days,
                    site.retention.days + nudge_rules_server::domain::retention::GRACE_DAYS
                );
            }
            if shift_ms != 0 {
                eprintln!(
                    "every time moved by {:.1} days (--shift-to-now)",
                    shift_ms as f64 / 86_400_000.0
                );
            }
            let seconds = started.elapsed().as_secs_f64().max(1e-9);
            println!(
                "{} sessions into site {:?} ({} mode): {} events stored, {} already present, {} bad records; {:.0} events/s",
                report.sessions,
                scope.site,
                scope.mode,
                report.events,
                report.duplicates,
                report.bad_records.len(),
                (report.events + report.duplicates) as f64 / seconds
            );
            if report.bad_records.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("nudge-rules-server import: {e}");
            ExitCode::from(2)
        }
    }
}

/// SIGTERM or SIGINT (Ctrl-C), listened for from the start: a signal during loading drains
/// too, instead of killing the process.
struct Termination {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Termination {
    fn listen() -> Termination {
        Termination {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some(term) = &mut self.term {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
