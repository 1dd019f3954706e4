//! The program's one set of I/O helpers: reading an input (a file, or stdin for `-`), writing
//! text and JSON to stdout, and listing diagnostics as text. Every command reads and writes
//! through them.

use std::io::{BufRead, BufWriter, ErrorKind, Read, Write};
use std::path::Path;

use nudge_rules::{Diagnostic, Error};

/// Reads stdin to its end.
fn read_stdin() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(text)
}

/// Reads an input file, or stdin for `-`.
pub(crate) fn read_input(path: &Path) -> Result<String, String> {
    if path == Path::new("-") {
        return read_stdin();
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// A request body given on the command line, or stdin when it is absent or `-`.
pub(crate) fn read_request(request: Option<String>) -> Result<String, String> {
    match request.as_deref() {
        None | Some("-") => read_stdin(),
        Some(text) => Ok(text.to_owned()),
    }
}

/// Answers every line of stdin that is not blank with `answer(line)` on a line of stdout
/// (buffered, flushed at the end).
pub(crate) fn map_stdin_lines(mut answer: impl FnMut(&str) -> String) -> Result<(), String> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("cannot read stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        writeln!(out, "{}", answer(&line)).map_err(|e| format!("cannot write stdout: {e}"))?;
    }
    out.flush().map_err(|e| format!("cannot write stdout: {e}"))
}

/// Writes `text` to stdout; a reader that stops early (`| head`) is not an error.
pub(crate) fn emit(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("cannot write stdout: {e}")),
        _ => Ok(()),
    }
}

/// Writes a value to stdout as pretty JSON, with a final newline.
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    emit(&(text + "\n"))
}

/// Every diagnostic on a line of its own: `  error[code] path: message (line L, column C)`.
pub(crate) fn list(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("  {}[{}] {d}", d.severity, d.code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `NAME is invalid: N errors` and every diagnostic with its code, path, line and column.
pub(crate) fn invalid(name: &str, e: &Error) -> String {
    let n = e.diagnostics().len();
    let plural = if n == 1 { "error" } else { "errors" };
    format!("{name} is invalid: {n} {plural}\n{}", list(e.diagnostics()))
}
