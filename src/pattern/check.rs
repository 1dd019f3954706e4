//! Checking a pattern as written (SPEC 3): its length, its start and end, and its glob syntax,
//! with globset as the parser of record; and the pattern's normalized text.

use globset::{Glob, GlobBuilder};

use super::literal::has_literal_forms;
use super::segment::classes_are_valid;
use crate::code::DiagnosticCode;
use crate::limits::MAX_PATTERN_BYTES;
use crate::normalize::normalize_pattern_text;
use crate::text::binary_size;

/// Builds a glob with every option set explicitly (SPEC 3): `*` and `?` never cross `/`, `\`
/// escapes, matching is case-sensitive (case folding is done by normalization), empty alternates
/// allowed (`/guide{,s}` matches `/guide` and `/guides`, as in a shell), no unclosed classes.
pub(super) fn glob(text: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(text)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(false)
        .empty_alternates(true)
        .allow_unclosed_class(false)
        .build()
}

/// The globs a pattern compiles to: itself, plus its prefix when it ends in `/**` (SPEC 3:
/// `/checkout/**` also matches `/checkout`).
pub(super) fn globs_of(normalized: &str) -> Result<Vec<Glob>, globset::Error> {
    let mut out = vec![glob(normalized)?];
    if let Some(prefix) = normalized.strip_suffix("/**")
        && !prefix.is_empty()
        && !prefix.ends_with('\\')
    {
        out.push(glob(prefix)?);
    }
    Ok(out)
}

/// A pattern problem found while loading a config: a stable code and a message naming the
/// pattern.
pub(crate) struct PatternProblem {
    pub(crate) code: DiagnosticCode,
    pub(crate) message: String,
}

/// Checks a pattern as written in the config and returns its normalized text (SPEC 3).
///
/// Rules: at most 512 bytes; starts with `/` or `**`; does not end in `/` (unless it is `/`);
/// parses as a glob (with its `/**` prefix variant); normalized like paths (NFKC, lowercase unless
/// `case_sensitive`).
pub(crate) fn check(raw: &str, case_sensitive: bool) -> Result<String, PatternProblem> {
    let problem = |code, message| Err(PatternProblem { code, message });
    if raw.len() > MAX_PATTERN_BYTES {
        return problem(
            DiagnosticCode::PatternTooLong,
            format!(
                "pattern is {} bytes long; the limit is {}",
                raw.len(),
                binary_size(MAX_PATTERN_BYTES)
            ),
        );
    }
    if !raw.starts_with('/') && !raw.starts_with("**") {
        let hint = if raw.is_empty() {
            "; use \"/**\" for every page".to_owned()
        } else if raw.starts_with("http://") || raw.starts_with("https://") {
            "; write only the path, without scheme and host".to_owned()
        } else {
            format!("; did you mean \"/{raw}\"?")
        };
        return problem(
            DiagnosticCode::PatternNotAbsolute,
            format!("pattern {raw:?} must start with '/' or '**'{hint}"),
        );
    }
    if raw.len() > 1 && raw.ends_with('/') {
        let trimmed = raw.trim_end_matches('/');
        let without = if trimmed.is_empty() { "/" } else { trimmed };
        return problem(
            DiagnosticCode::PatternTrailingSlash,
            format!(
                "pattern {raw:?} ends with '/', which a normalized path never does; write {without:?}, or \"{trimmed}/**\" for the page and everything below it"
            ),
        );
    }
    let normalized = normalize_pattern_text(raw, case_sensitive);
    // globset's errors are unclosed classes and groups, reversed ranges and a dangling escape:
    // without `{`, `}` or `\`, only classes can be wrong, which `classes_are_valid` checks
    // without building anything. Literal and literal-prefix patterns are valid by construction.
    // The others must parse in globset.
    if !normalized.contains(['{', '}', '\\']) && classes_are_valid(&normalized)
        || has_literal_forms(&normalized)
    {
        return Ok(normalized);
    }
    if let Err(e) = globs_of(&normalized) {
        return problem(
            DiagnosticCode::PatternSyntax,
            format!("pattern {raw:?} is not a valid glob: {}", e.kind()),
        );
    }
    // Regex size limits are checked when the whole set is built; see `PatternSet::build`.
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_rejects_with_hints() {
        let c = |p: &str| check(p, false).map_err(|e| (e.code, e.message));
        assert_eq!(c("/Products/**").unwrap(), "/products/**");
        assert_eq!(c("**/x").unwrap(), "**/x");
        let (code, msg) = c("/products/").unwrap_err();
        assert_eq!(code, DiagnosticCode::PatternTrailingSlash);
        assert!(
            msg.contains("\"/products\"") && msg.contains("/products/**"),
            "{msg}"
        );
        assert_eq!(
            c("products/**").unwrap_err().0,
            DiagnosticCode::PatternNotAbsolute
        );
        assert_eq!(c("").unwrap_err().0, DiagnosticCode::PatternNotAbsolute);
        let (code, msg) = c("/a/{b").unwrap_err();
        assert_eq!(code, DiagnosticCode::PatternSyntax);
        assert!(msg.contains("unclosed alternate"), "{msg}");
        assert_eq!(c("/a/[").unwrap_err().0, DiagnosticCode::PatternSyntax);
        assert_eq!(c(&format!("/{}", "a".repeat(511))).map(|_| ()), Ok(()));
        assert_eq!(
            c(&format!("/{}", "a".repeat(512))).unwrap_err().0,
            DiagnosticCode::PatternTooLong
        );
        assert_eq!(c("/").unwrap(), "/");
    }
}
