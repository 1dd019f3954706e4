//! Checking a pattern as written (docs/contract/patterns.md): its length, its start and end, and its glob syntax,
//! with globset as the parser of record; and the pattern's normalized text.

use globset::{Glob, GlobBuilder};

use super::literal::has_literal_forms;
use super::segment::classes_are_valid;
use crate::code::DiagnosticCode;
use crate::limits::MAX_PATTERN_BYTES;
use crate::normalize::normalize_pattern_text;
use crate::text::binary_size;

/// Builds a glob with every option set explicitly (docs/contract/patterns.md): `*` and `?` never cross `/`, `\`
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

/// The globs a pattern compiles to: itself, plus its prefix when it ends in `/**` (docs/contract/patterns.md:
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

/// A pattern problem found while loading a config: a stable code, a message naming the pattern,
/// and the patterns the message suggests instead (none when it suggests nothing), which an editor
/// offers as "did you mean".
pub(crate) struct PatternProblem {
    pub(crate) code: DiagnosticCode,
    pub(crate) message: String,
    // Read by the WASM facade (`NudgeEngine.checkPattern`, src/wasm/editor.rs); a native build
    // without it only fills it in.
    #[cfg_attr(any(not(feature = "wasm"), feature = "slim"), allow(dead_code))]
    pub(crate) fixes: Vec<String>,
}

/// Checks a pattern as written in the config and returns its normalized text (docs/contract/patterns.md).
///
/// Rules: at most 512 bytes; starts with `/` or `**`; does not end in `/` (unless it is `/`);
/// parses as a glob (with its `/**` prefix variant); normalized like paths (NFKC, lowercase unless
/// `case_sensitive`).
pub(crate) fn check(raw: &str, case_sensitive: bool) -> Result<String, PatternProblem> {
    let problem = |code, message, fixes| {
        Err(PatternProblem {
            code,
            message,
            fixes,
        })
    };
    if raw.len() > MAX_PATTERN_BYTES {
        return problem(
            DiagnosticCode::PatternTooLong,
            msg!(
                "pattern is {} bytes long; the limit is {}",
                raw.len(),
                binary_size(MAX_PATTERN_BYTES)
            ),
            Vec::new(),
        );
    }
    if !raw.starts_with('/') && !raw.starts_with("**") {
        let scheme_rest = raw
            .strip_prefix("http://")
            .or_else(|| raw.strip_prefix("https://"));
        let (hint, fixes) = if raw.is_empty() {
            (
                "; use \"/**\" for every page".to_owned(),
                vec!["/**".to_owned()],
            )
        } else if let Some(rest) = scheme_rest {
            // The path after the host, if there is one.
            let path = rest.find('/').map(|i| rest[i..].to_owned());
            (
                "; write only the path, without scheme and host".to_owned(),
                path.into_iter().collect(),
            )
        } else {
            let fix = format!("/{raw}");
            (msg!("; did you mean \"{fix}\"?"), vec![fix])
        };
        return problem(
            DiagnosticCode::PatternNotAbsolute,
            msg!("pattern {raw:?} must start with '/' or '**'{hint}"),
            fixes,
        );
    }
    if raw.len() > 1 && raw.ends_with('/') {
        let trimmed = raw.trim_end_matches('/');
        let without = if trimmed.is_empty() { "/" } else { trimmed };
        return problem(
            DiagnosticCode::PatternTrailingSlash,
            msg!(
                "pattern {raw:?} ends with '/', which a normalized path never does; write {without:?}, or \"{trimmed}/**\" for the page and everything below it"
            ),
            vec![without.to_owned(), format!("{trimmed}/**")],
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
            msg!("pattern {raw:?} is not a valid glob: {}", e.kind()),
            Vec::new(),
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
        let fixes = |p: &str| check(p, false).err().map(|e| e.fixes);
        assert_eq!(
            fixes("/products/"),
            Some(vec!["/products".into(), "/products/**".into()])
        );
        assert_eq!(fixes("products/**"), Some(vec!["/products/**".into()]));
        assert_eq!(fixes(""), Some(vec!["/**".into()]));
        assert_eq!(
            fixes("https://shop.example/sale/**"),
            Some(vec!["/sale/**".into()])
        );
        assert_eq!(fixes("https://shop.example"), Some(vec![]));
        assert_eq!(fixes("/a/{b"), Some(vec![]));
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
