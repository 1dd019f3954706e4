//! The `nudge-rules` command-line program: preview, check, normalize (and the analysis commands).
//!
//! Exit codes: 0 success; 1 the request or URL was rejected; 2 the config is invalid or the
//! command line is wrong.

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use nudge_rules::analysis::{validate_config, Validation};
use nudge_rules::{normalize_page_url, Diagnostic, Engine, Error, ErrorKind, SessionState};

/// The embedded default config: a realistic storefront (`examples/storefront.json`).
const STOREFRONT: &str = include_str!("../examples/storefront.json");

#[derive(Parser)]
#[command(
    name = "nudge-rules",
    version,
    about = "Decide which on-site nudge fires for a storefront visitor (POST /v1/nudges/preview)",
    after_help = "Without --config, the embedded storefront config (examples/storefront.json) is used."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Answer a preview request: prints the response body (one line of JSON).
    ///
    /// Exit 0 when a preview result was printed (fired or not), 1 for an InvalidRequest (its
    /// error body is printed), 2 for an invalid config (errors on stderr).
    Preview {
        /// Site config file (JSON); default: the embedded storefront config.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Read one request body per line of stdin and print one response body per line; a bad
        /// line gets its error body and the rest go on.
        #[arg(long, conflicts_with = "request")]
        jsonl: bool,
        /// The request body as JSON text, e.g.
        /// '{"session_state":{"intent_score":82,"page_url":"/products/x","idle_ms":9000}}';
        /// absent or "-": read it from stdin.
        request: Option<String>,
    },
    /// Validate a config: every error, then every lint warning, with path, line and column.
    /// Exit 0 valid (warnings or not), 2 invalid.
    Check {
        /// Site config file (JSON); default: the embedded storefront config.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print `{"valid": bool, "errors": [...], "warnings": [...]}` instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Explain a request: every rule's verdict and conditions, the quiet zone, the normalized
    /// path, the earliest idle time at which a nudge fires (JSON). Exit 1 for a bad request.
    Explain {
        /// Site config file (JSON); default: the embedded storefront config.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The request body as JSON text (as for `preview`); absent or "-": read from stdin.
        request: Option<String>,
    },
    /// The decision map of a page: which rule fires over the whole intent x idle plane (JSON
    /// `{"path", "quiet_zone", "regions": [...]}`). Exit 1 when the URL is rejected.
    Map {
        /// Site config file (JSON); default: the embedded storefront config.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The page URL.
        #[arg(long, value_name = "URL")]
        page: String,
    },
    /// Print the canonical path of a page URL (SPEC 4); exit 1 with the reason if rejected.
    Normalize {
        /// Keep letter case (as a config with "case_sensitive": true does).
        #[arg(long)]
        case_sensitive: bool,
        /// The page URL: a path starting with '/' or an absolute http(s) URL.
        url: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Preview {
            config,
            jsonl,
            request,
        } => preview(config, jsonl, request),
        Command::Check { config, json } => check(config, json),
        Command::Explain { config, request } => explain(config, request),
        Command::Map { config, page } => map(config, &page),
        Command::Normalize {
            case_sensitive,
            url,
        } => match normalize_page_url(&url, case_sensitive) {
            Ok(path) => {
                println!("{path}");
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("rejected ({}): {e}", e.code());
                Ok(ExitCode::from(1))
            }
        },
    };
    result.unwrap_or_else(|message| {
        eprintln!("nudge-rules: {message}");
        ExitCode::from(2)
    })
}

/// Reads the config file (or the embedded default).
fn config_text(path: Option<&PathBuf>) -> Result<String, String> {
    match path {
        None => Ok(STOREFRONT.to_owned()),
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read config file {}: {e}", p.display())),
    }
}

/// Compiles the config, printing every error to stderr when it is invalid.
fn engine(path: Option<&PathBuf>) -> Result<Engine, String> {
    let text = config_text(path)?;
    Engine::compile(&text).map_err(|e| {
        let name = path.map_or("the embedded config".to_owned(), |p| {
            p.display().to_string()
        });
        format!("{name} is invalid:\n{}", list(e.diagnostics()))
    })
}

fn list(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("  {}[{}] {d}", d.severity, d.code))
        .collect::<Vec<_>>()
        .join("\n")
}

fn read_stdin() -> Result<String, String> {
    let mut text = String::new();
    io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(text)
}

fn preview(
    config: Option<PathBuf>,
    jsonl: bool,
    request: Option<String>,
) -> Result<ExitCode, String> {
    let engine = engine(config.as_ref())?;
    if jsonl {
        let stdin = io::stdin();
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        for line in stdin.lock().lines() {
            let line = line.map_err(|e| format!("cannot read stdin: {e}"))?;
            if line.trim().is_empty() {
                continue;
            }
            let body = engine
                .preview_body(line.as_bytes())
                .unwrap_or_else(|e| e.to_body());
            writeln!(out, "{body}").map_err(|e| format!("cannot write stdout: {e}"))?;
        }
        out.flush()
            .map_err(|e| format!("cannot write stdout: {e}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let body = request_body(request)?;
    match engine.preview_body(body.as_bytes()) {
        Ok(response) => {
            println!("{response}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{}", e.to_body());
            Ok(ExitCode::from(exit_code(&e)))
        }
    }
}

fn request_body(request: Option<String>) -> Result<String, String> {
    match request.as_deref() {
        None | Some("-") => read_stdin(),
        Some(text) => Ok(text.to_owned()),
    }
}

/// Prints a value as pretty JSON.
fn print_json(value: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    println!("{text}");
    Ok(())
}

fn explain(config: Option<PathBuf>, request: Option<String>) -> Result<ExitCode, String> {
    let engine = engine(config.as_ref())?;
    let body = request_body(request)?;
    let explained =
        SessionState::from_request_body(body.as_bytes()).and_then(|state| engine.explain(&state));
    match explained {
        Ok(explanation) => {
            print_json(&explanation)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{}", e.to_body());
            Ok(ExitCode::from(exit_code(&e)))
        }
    }
}

fn map(config: Option<PathBuf>, page: &str) -> Result<ExitCode, String> {
    let engine = engine(config.as_ref())?;
    let map = engine.decision_map(page);
    if let Some(rejected) = &map.url_error {
        eprintln!("rejected ({}): {}", rejected.code, rejected.message);
        return Ok(ExitCode::from(1));
    }
    print_json(&map)?;
    Ok(ExitCode::SUCCESS)
}

fn exit_code(e: &Error) -> u8 {
    if e.kind() == ErrorKind::InvalidRequest {
        1
    } else {
        2
    }
}

fn check(config: Option<PathBuf>, json: bool) -> Result<ExitCode, String> {
    let text = config_text(config.as_ref())?;
    let name = config
        .as_ref()
        .map_or("the embedded config".to_owned(), |p| {
            p.display().to_string()
        });
    let validation = validate_config(&text);
    let Validation {
        valid,
        errors,
        warnings,
        ..
    } = &validation;
    if json {
        println!(
            "{}",
            serde_json::to_string(&validation).map_err(|e| e.to_string())?
        );
    } else if *valid {
        println!("{name} is valid ({} warnings)", warnings.len());
        if !warnings.is_empty() {
            println!("{}", list(warnings));
        }
    } else {
        eprintln!("{name} is invalid: {} errors", errors.len());
        eprintln!("{}", list(errors));
    }
    Ok(if *valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
