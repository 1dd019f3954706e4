//! `nudge-rules-server`: the preview server (SPEC 7). See docs/SERVER.md.

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use nudge_rules_server::keys::{is_well_formed_key, KeyHash};
use nudge_rules_server::limiter::SystemClock;
use nudge_rules_server::registry::{ConfigSource, SiteDef};
use nudge_rules_server::server::{Options, Server};
use nudge_rules_server::{api, sites, DEMO_CONFIG, DEMO_KEY};

/// The preview server: POST /v1/nudges/preview for many sites, with API keys, an exact
/// rolling-minute rate limit per key, hot config reload and an admin listener.
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
        /// The API key: sk_live_ or sk_test_ and at least 16 letters or digits.
        key: String,
    },
}

#[derive(Args)]
struct ServeArgs {
    /// The sites file (TOML): [[site]] tables with id, config, rate_limit, keys.
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
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The admin listener (/healthz, /readyz, /metrics, /openapi.json, /sites); no
    /// authentication, so keep it private.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9090")]
    admin_listen: SocketAddr,
    /// Share rate limits through this Redis (redis://host:port[/db]); falls back to a local
    /// limiter while it is unreachable.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// How often config files are checked for changes, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    reload_interval_ms: u64,
    /// How long a client may take to send a request head, in milliseconds (also the idle
    /// keep-alive timeout).
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    header_read_timeout_ms: u64,
    /// How long a request body may pause between chunks before 408, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    body_read_timeout_ms: u64,
    /// How long in-flight requests may take to finish after SIGTERM, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    drain_timeout_ms: u64,
    /// Also serve POST /v1/_bench/constant: the same pipeline answering a constant body (the
    /// load benchmark's baseline).
    #[arg(long)]
    constant_route: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::HashKey { key }) => hash_key(&key),
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
    if !is_well_formed_key(&key) {
        eprintln!(
            "nudge-rules-server hash-key: not an API key: expected sk_live_ or sk_test_ followed by at least 16 letters or digits"
        );
        return ExitCode::from(2);
    }
    let hash = KeyHash::of_key(&key);
    println!("keys = [\"{hash}\"]");
    eprintln!(
        "(add the quoted hash to the site's keys; log lines will name this key {})",
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
            eprintln!("nudge-rules-server: --demo has a public test key; it listens on loopback addresses only");
            return ExitCode::from(2);
        }
        vec![SiteDef {
            id: "demo".to_owned(),
            source: ConfigSource::Embedded(DEMO_CONFIG),
            rate_limit: sites::DEFAULT_RATE_LIMIT,
            keys: vec![KeyHash::of_key(DEMO_KEY)],
        }]
    } else {
        let file = args.sites.clone().unwrap_or_default();
        match sites::load(&file) {
            Ok(specs) => specs.into_iter().map(SiteDef::from).collect(),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    };
    let options = Options {
        listen: args.listen,
        admin_listen: args.admin_listen,
        redis_url: args.redis.clone(),
        header_read_timeout: Duration::from_millis(args.header_read_timeout_ms),
        body_read_timeout: Duration::from_millis(args.body_read_timeout_ms),
        drain_timeout: Duration::from_millis(args.drain_timeout_ms),
        reload_interval: Duration::from_millis(args.reload_interval_ms),
        constant_route: args.constant_route,
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

async fn run(defs: Vec<SiteDef>, options: Options, demo: bool) -> ExitCode {
    let mut termination = Termination::listen();
    let site_count = defs.len();
    let mut server = match Server::bind(defs, &options, Arc::new(SystemClock::new())).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("nudge-rules-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let api_url = format!("http://{}{}", server.api_addr(), api::PREVIEW_PATH);
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
            "demo site: the embedded storefront config; test key {DEMO_KEY}"
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
    ExitCode::SUCCESS
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
