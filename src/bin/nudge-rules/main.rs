//! The `nudge-rules` command-line program: preview, check, normalize (and the analysis commands),
//! and config as code: test, replay, diff (docs/contract/as-code.md; `cli/`). All input and output goes through `io.rs`.
//!
//! Exit codes: 0 success; 1 the request or URL was rejected, a scenario failed, or a diff found
//! changes; 2 the config (or a scenario file, or the sessions) is invalid or the command line is
//! wrong.

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]
#![deny(missing_docs)]

use std::path::PathBuf;
use std::process::ExitCode;

mod cli;
mod io;

use clap::{Parser, Subcommand};
use nudge_rules::analysis::{Analysis, Validation, validate_config};
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::{Engine, Error, ErrorKind, SessionState, normalize_page_url};

use crate::io::{emit, invalid, list, map_stdin_lines, print_json, read_input, read_request};

/// The embedded default config: a realistic storefront (`examples/storefront.json`).
const STOREFRONT: &str = include_str!("../../../examples/storefront.json");

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
    /// Check scenario files against a config (docs/contract/as-code.md): exit 0 when every scenario passes, 1 when
    /// any fails (each failure with expected, got and the reason), 2 for an invalid config or
    /// scenario file (every error with its path, line and column).
    Test {
        /// Site config file (JSON); default: the embedded storefront config.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Output: text, junit (JUnit XML for CI systems) or json.
        #[arg(long, value_enum, default_value = "text")]
        format: cli::test::Format,
        /// Same as --format json.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Also report coverage: rules fired, conditions seen true and false, patterns and quiet
        /// zones matched, and what was never exercised.
        #[arg(long)]
        coverage: bool,
        /// List the scenarios that pass too (text format).
        #[arg(long, short)]
        verbose: bool,
        /// Scenario files (JSON: {"scenarios": [{"name", "session_state", "expect"}]}); "-" reads
        /// stdin.
        #[arg(required = true, value_name = "SCENARIOS")]
        files: Vec<PathBuf>,
    },
    /// Replay recorded sessions (API document 2.2: JSONL or a JSON array) against a config
    /// (docs/contract/as-code.md): each page with the nudge that would fire and when, beside the nudges really
    /// shown, and a summary per rule and per nudge type. Exit 2 for an invalid config or input.
    Replay {
        /// Site config file (JSON); default: the embedded storefront config.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the replay as JSON.
        #[arg(long)]
        json: bool,
        /// Print only the summary.
        #[arg(long)]
        summary: bool,
        /// The sessions file; "-" reads stdin.
        #[arg(value_name = "SESSIONS")]
        sessions: PathBuf,
    },
    /// Compare two configs (docs/contract/as-code.md): the scenarios and recorded page views whose outcome
    /// changes, both outcomes and a count per change kind; without inputs, the regions of the
    /// decision maps of the pages the configs mention that change owner. Exit 0 no change, 1
    /// changes, 2 invalid config or input.
    Diff {
        /// The old config, then the new one (`--config OLD --config NEW`); a missing one is the
        /// embedded storefront config.
        #[arg(long, value_name = "FILE", num_args = 1, action = clap::ArgAction::Append)]
        config: Vec<PathBuf>,
        /// Compare the decision maps of these pages instead of the pages the configs mention
        /// (when no input is given).
        #[arg(long, value_name = "URL", conflicts_with = "inputs")]
        page: Vec<String>,
        /// Print the diff as JSON.
        #[arg(long)]
        json: bool,
        /// Scenario files or recorded sessions, told apart by content.
        #[arg(value_name = "SCENARIOS or SESSIONS")]
        inputs: Vec<PathBuf>,
    },
    /// Print the canonical path of a page URL (docs/contract/urls.md); exit 1 with the reason if rejected.
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
        Command::Test {
            config,
            format,
            json,
            coverage,
            verbose,
            files,
        } => engine(config.as_ref()).and_then(|engine| {
            let format = if json {
                cli::test::Format::Json
            } else {
                format
            };
            let options = cli::test::Options {
                files,
                format,
                coverage,
                verbose,
            };
            cli::test::run(&engine, &options)
        }),
        Command::Replay {
            config,
            json,
            summary,
            sessions,
        } => replay(config, json, summary, &sessions),
        Command::Diff {
            config,
            page,
            json,
            inputs,
        } => diff(&config, &page, json, &inputs),
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

fn preview(
    config: Option<PathBuf>,
    jsonl: bool,
    request: Option<String>,
) -> Result<ExitCode, String> {
    let engine = engine(config.as_ref())?;
    if jsonl {
        map_stdin_lines(|line| {
            engine
                .preview_body(line.as_bytes())
                .unwrap_or_else(|e| e.to_body())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let body = read_request(request)?;
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

fn explain(config: Option<PathBuf>, request: Option<String>) -> Result<ExitCode, String> {
    let engine = engine(config.as_ref())?;
    let body = read_request(request)?;
    let explained = SessionState::from_request_body(body.as_bytes())
        .and_then(|state| Analysis::new(&engine).explain(&state));
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
    let map = Analysis::new(&engine).decision_map(page);
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

fn replay(
    config: Option<PathBuf>,
    json: bool,
    summary_only: bool,
    path: &std::path::Path,
) -> Result<ExitCode, String> {
    let engine = engine(config.as_ref())?;
    let text = read_input(path)?;
    let sessions = nudge_rules::replay::Sessions::from_text(&text)
        .map_err(|e| invalid(&path.display().to_string(), &e))?;
    match (json, summary_only) {
        (true, true) => print_json(&ConfigAsCode::new(&engine).replay_summary(&sessions))?,
        (true, false) => print_json(&ConfigAsCode::new(&engine).replay(&sessions))?,
        (false, _) => emit(&cli::replay::text(
            &ConfigAsCode::new(&engine).replay(&sessions),
            summary_only,
        ))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn diff(
    configs: &[PathBuf],
    pages: &[String],
    json: bool,
    inputs: &[PathBuf],
) -> Result<ExitCode, String> {
    if configs.len() > 2 {
        return Err("diff takes at most two configs: --config OLD --config NEW".to_owned());
    }
    // A missing config is the embedded storefront: `diff --config NEW` compares it with NEW.
    let old = engine(configs.len().checked_sub(2).and_then(|i| configs.get(i)))?;
    let new = engine(configs.last())?;
    let mut given = Vec::new();
    let mut problems = Vec::new();
    for path in inputs {
        let text = read_input(path)?;
        match nudge_rules::diff::DiffInput::from_text(&text) {
            Ok(input) => given.push(input),
            Err(e) => problems.push(invalid(&path.display().to_string(), &e)),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let d = if pages.is_empty() {
        ConfigAsCode::new(&old).diff(&new, &given)
    } else {
        ConfigAsCode::new(&old).diff_maps(&new, Some(pages))
    };
    if json {
        print_json(&d)?;
    } else {
        let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        emit(&cli::diff::text(&d, &names))?;
    }
    Ok(ExitCode::from(u8::from(!d.counts.is_empty())))
}
