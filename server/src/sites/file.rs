//! The sites file (TOML): which sites the server serves, each with its config file, its rate
//! limit and the hashes of its API keys (docs/contract/server.md "Sites and keys").
//!
//! ```toml
//! [[site]]
//! id = "storefront"                 # 1 to 64 of A-Z a-z 0-9 _ -
//! config = "storefront.json"        # relative to the sites file's folder; absent: the config
//!                                   # is managed through the API (docs/contract/versions.md), kept in the store
//! rate_limit = 1000                 # requests per rolling 60 s per key, 1 to 100,000
//! keys = ["sha256:3f9a..."]         # `nudge-rules-server hash-key KEY` prints one
//! site_keys = ["sha256:77c1..."]    # publishable pk_ keys of the relay (docs/contract/relay.md); optional
//! plan = "growth"                   # starter (default), growth, scale, enterprise
//! retention_days = 365              # enterprise only: 90 to 730 (default 90)
//! allowed_origins = ["https://editor.example.com"]  # CORS on the REST endpoints (docs/contract/backtest.md)
//! ```
//!
//! Every problem is reported at once, each with its path (`site[1].keys[0]`), line and column,
//! the way `nudge-rules check` reports a config.

use std::collections::HashMap;

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::def::{
    ConfigSource, DEFAULT_RATE_LIMIT, MAX_ALLOWED_ORIGINS, MAX_RATE_LIMIT, MAX_SITE_ID_CHARS,
    Problem, SiteDef, SitesError,
};
use crate::domain::retention::{MAX_RETENTION_DAYS, Plan, Retention};
use crate::sites::keys::KeyHash;

const SITE_FIELDS: [&str; 8] = [
    "id",
    "config",
    "rate_limit",
    "keys",
    "site_keys",
    "plan",
    "retention_days",
    "allowed_origins",
];

/// Reads and checks a sites file; relative config paths are resolved against its folder, and
/// each config file must exist (its content is compiled later, by the site registry).
///
/// # Errors
///
/// [`SitesError`] with every problem: TOML syntax, unknown or missing fields, bad values,
/// duplicate ids or keys, unreadable config files.
pub fn load(file: &Path) -> Result<Vec<SiteDef>, SitesError> {
    let error = |problems| SitesError {
        file: file.to_owned(),
        problems,
    };
    let text = std::fs::read_to_string(file).map_err(|e| {
        error(vec![Problem {
            path: String::new(),
            message: format!("cannot read the sites file: {e}"),
            line: None,
            column: None,
        }])
    })?;
    let base = file.parent().unwrap_or_else(|| Path::new(""));
    parse(&text, base).map_err(error)
}

/// Checks the text of a sites file; `base` is the folder relative config paths start from.
///
/// # Errors
///
/// Every problem found, in document order.
pub fn parse(text: &str, base: &Path) -> Result<Vec<SiteDef>, Vec<Problem>> {
    let mut checker = Checker {
        text,
        problems: Vec::new(),
    };
    let (document, syntax_errors) = DeTable::parse_recoverable(text);
    for e in &syntax_errors {
        checker.problem("", e.span(), format!("TOML syntax: {}", e.message()));
    }
    if !syntax_errors.is_empty() {
        return Err(checker.problems);
    }
    let sites = checker.document(document.get_ref(), base);
    if checker.problems.is_empty() {
        Ok(sites)
    } else {
        Err(checker.problems)
    }
}

struct Checker<'t> {
    text: &'t str,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn problem(&mut self, path: &str, span: Option<Range<usize>>, message: String) {
        let (line, column) = match span {
            Some(span) => {
                let (line, column) = line_column(self.text, span.start);
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        self.problems.push(Problem {
            path: path.to_owned(),
            message,
            line,
            column,
        });
    }

    fn document(&mut self, document: &DeTable<'_>, base: &Path) -> Vec<SiteDef> {
        let mut site_tables = None;
        for (key, value) in document {
            if key.get_ref() == "site" {
                site_tables = Some(value);
            } else {
                let message = unknown_field(key.get_ref(), &["site"]);
                self.problem(key.get_ref(), Some(key.span()), message);
            }
        }
        let Some(site_tables) = site_tables else {
            self.problem(
                "site",
                None,
                "no [[site]] table; a sites file defines at least one site".to_owned(),
            );
            return Vec::new();
        };
        let Some(array) = site_tables.get_ref().as_array() else {
            self.problem(
                "site",
                Some(site_tables.span()),
                format!(
                    "must be an array of tables ([[site]]), got a {}",
                    site_tables.get_ref().type_str()
                ),
            );
            return Vec::new();
        };
        let mut sites = Vec::new();
        let mut ids: HashMap<String, usize> = HashMap::new();
        let mut owners: HashMap<KeyHash, (String, usize)> = HashMap::new();
        for (i, value) in array.iter().enumerate() {
            let path = format!("site[{i}]");
            let Some(table) = value.get_ref().as_table() else {
                self.problem(
                    &path,
                    Some(value.span()),
                    format!("must be a table, got a {}", value.get_ref().type_str()),
                );
                continue;
            };
            if let Some(site) = self.site(&path, table, value.span(), base) {
                if let Some(first) = ids.insert(site.id.clone(), i) {
                    let span = table.get("id").map(Spanned::span);
                    self.problem(
                        &format!("{path}.id"),
                        span,
                        format!("site id {:?} is already used by site[{first}]", site.id),
                    );
                }
                let listed = site
                    .keys
                    .iter()
                    .enumerate()
                    .map(|(k, hash)| ("keys", k, hash))
                    .chain(
                        site.site_keys
                            .iter()
                            .enumerate()
                            .map(|(k, hash)| ("site_keys", k, hash)),
                    );
                for (field, k, hash) in listed {
                    let previous = owners.insert(*hash, (format!("{path}.{field}[{k}]"), i));
                    if let Some((first, _)) = previous {
                        let span = table
                            .get(field)
                            .and_then(|keys| keys.get_ref().as_array())
                            .and_then(|keys| keys.get(k))
                            .map(Spanned::span);
                        self.problem(
                            &format!("{path}.{field}[{k}]"),
                            span,
                            format!(
                                "key {} is already listed at {first}; a key belongs to one site",
                                hash.log_id()
                            ),
                        );
                    }
                }
                sites.push(site);
            }
        }
        if array.is_empty() {
            self.problem(
                "site",
                Some(site_tables.span()),
                "no sites; a sites file defines at least one site".to_owned(),
            );
        }
        sites
    }

    /// One `[[site]]`; `None` when it has problems (already recorded).
    fn site(
        &mut self,
        path: &str,
        table: &DeTable<'_>,
        span: Range<usize>,
        base: &Path,
    ) -> Option<SiteDef> {
        let before = self.problems.len();
        for (key, _) in table {
            if !SITE_FIELDS.contains(&key.get_ref().as_ref()) {
                let message = unknown_field(key.get_ref(), &SITE_FIELDS);
                self.problem(
                    &format!("{path}.{}", key.get_ref()),
                    Some(key.span()),
                    message,
                );
            }
        }
        let id = self
            .required_string(path, table, "id", &span)
            .and_then(|(id, span)| {
                let bad = id
                    .chars()
                    .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'));
                let chars = id.chars().count();
                let message = match bad {
                    _ if chars == 0 || chars > MAX_SITE_ID_CHARS => Some(format!(
                    "site id {id:?} has {chars} characters; 1 to {MAX_SITE_ID_CHARS} are allowed"
                )),
                    Some(c) => Some(format!(
                    "site id {id:?} contains {c:?}; only A-Z, a-z, 0-9, '_' and '-' are allowed"
                )),
                    None => None,
                };
                match message {
                    Some(message) => {
                        self.problem(&format!("{path}.id"), Some(span), message);
                        None
                    }
                    None => Some(id),
                }
            });
        let config_path = match table.get("config") {
            None => Some(None),
            Some(_) => {
                self.required_string(path, table, "config", &span)
                    .and_then(|(config, span)| {
                        let resolved = base.join(&config);
                        let problem = match std::fs::metadata(&resolved) {
                            _ if config.is_empty() => Some("config path is empty".to_owned()),
                            Ok(meta) if meta.is_file() => None,
                            Ok(_) => Some(format!("{} is not a file", resolved.display())),
                            Err(e) => Some(format!("cannot read {}: {e}", resolved.display())),
                        };
                        match problem {
                            Some(message) => {
                                self.problem(&format!("{path}.config"), Some(span), message);
                                None
                            }
                            None => Some(Some(resolved)),
                        }
                    })
            }
        };
        let rate_limit = match table.get("rate_limit") {
            None => Some(DEFAULT_RATE_LIMIT),
            Some(value) => {
                let parsed = value.get_ref().as_integer().and_then(|n| {
                    i64::from_str_radix(n.as_str(), n.radix())
                        .ok()
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|n| (1..=MAX_RATE_LIMIT).contains(n))
                });
                if parsed.is_none() {
                    let shown = &self.text.get(value.span()).unwrap_or("?").to_owned();
                    self.problem(
                        &format!("{path}.rate_limit"),
                        Some(value.span()),
                        format!(
                            "rate_limit must be an integer from 1 to {MAX_RATE_LIMIT} (requests per rolling 60 s per key), got {shown}"
                        ),
                    );
                }
                parsed
            }
        };
        let keys = self.keys(path, table, &span, "keys");
        let site_keys = match table.get("site_keys") {
            None => Some(Vec::new()),
            Some(_) => self.keys(path, table, &span, "site_keys"),
        };
        let plan = match table.get("plan") {
            None => Some(Plan::default()),
            Some(value) => {
                let plan = value.get_ref().as_str().and_then(Plan::parse);
                if plan.is_none() {
                    let shown = self.text.get(value.span()).unwrap_or("?").to_owned();
                    self.problem(
                        &format!("{path}.plan"),
                        Some(value.span()),
                        format!(
                            "plan must be one of \"starter\", \"growth\", \"scale\", \"enterprise\", got {shown}"
                        ),
                    );
                }
                plan
            }
        };
        let retention = match (plan, table.get("retention_days")) {
            (Some(plan), None) => Some(Retention {
                days: plan.default_days(),
            }),
            (plan, Some(value)) => {
                let days = value.get_ref().as_integer().and_then(|n| {
                    i64::from_str_radix(n.as_str(), n.radix())
                        .ok()
                        .and_then(|n| u32::try_from(n).ok())
                });
                let shown = self.text.get(value.span()).unwrap_or("?").to_owned();
                let message = match (plan, days) {
                    (Some(Plan::Enterprise), Some(days))
                        if (90..=MAX_RETENTION_DAYS).contains(&days) =>
                    {
                        None
                    }
                    (Some(Plan::Enterprise), _) => Some(format!(
                        "retention_days must be an integer from 90 to {MAX_RETENTION_DAYS} (days of sessions kept visible), got {shown}"
                    )),
                    (Some(other), _) => Some(format!(
                        "retention_days is for plan = \"enterprise\" only; the {other} plan keeps {} days",
                        other.default_days()
                    )),
                    (None, _) => None,
                };
                match message {
                    Some(message) => {
                        self.problem(
                            &format!("{path}.retention_days"),
                            Some(value.span()),
                            message,
                        );
                        None
                    }
                    None => days.map(|days| Retention { days }),
                }
            }
            (None, None) => None,
        };
        let allowed_origins = self.origins(path, table);
        if self.problems.len() > before {
            return None;
        }
        Some(SiteDef {
            id: id?,
            source: config_path?.map_or(ConfigSource::Store, ConfigSource::File),
            allowed_origins: allowed_origins?,
            rate_limit: rate_limit?,
            keys: keys?,
            site_keys: site_keys?,
            plan: plan?,
            retention: retention?,
        })
    }

    /// `allowed_origins`: each an origin in its serialized form (`https://editor.example.com`,
    /// `http://localhost:8080`), at most [`MAX_ALLOWED_ORIGINS`].
    fn origins(&mut self, path: &str, table: &DeTable<'_>) -> Option<Vec<String>> {
        let Some(value) = table.get("allowed_origins") else {
            return Some(Vec::new());
        };
        let field = format!("{path}.allowed_origins");
        let Some(array) = value.get_ref().as_array() else {
            self.problem(
                &field,
                Some(value.span()),
                format!(
                    "allowed_origins must be an array of strings such as [\"https://editor.example.com\"], got a {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        if array.len() > MAX_ALLOWED_ORIGINS {
            self.problem(
                &field,
                Some(value.span()),
                format!(
                    "allowed_origins has {} origins; at most {MAX_ALLOWED_ORIGINS} are allowed",
                    array.len()
                ),
            );
            return None;
        }
        let mut origins = Vec::new();
        for (i, item) in array.iter().enumerate() {
            let item_path = format!("{field}[{i}]");
            let Some(text) = item.get_ref().as_str() else {
                self.problem(
                    &item_path,
                    Some(item.span()),
                    format!(
                        "must be a string such as \"https://editor.example.com\", got a {}",
                        item.get_ref().type_str()
                    ),
                );
                continue;
            };
            match origin_of(text) {
                Ok(origin) => origins.push(origin),
                Err(message) => self.problem(&item_path, Some(item.span()), message),
            }
        }
        (origins.len() == array.len()).then_some(origins)
    }

    /// `keys` (secret keys, at least one) or `site_keys` (publishable keys, possibly none).
    fn keys(
        &mut self,
        path: &str,
        table: &DeTable<'_>,
        site_span: &Range<usize>,
        field: &str,
    ) -> Option<Vec<KeyHash>> {
        let Some(value) = table.get(field) else {
            self.problem(
                &format!("{path}.keys"),
                Some(site_span.clone()),
                "missing field \"keys\": the SHA-256 hashes of the site's API keys (`nudge-rules-server hash-key KEY` prints one)".to_owned(),
            );
            return None;
        };
        let Some(array) = value.get_ref().as_array() else {
            self.problem(
                &format!("{path}.{field}"),
                Some(value.span()),
                format!(
                    "{field} must be an array of strings, got a {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        if array.is_empty() && field == "keys" {
            self.problem(
                &format!("{path}.keys"),
                Some(value.span()),
                "keys is empty; a site needs at least one key".to_owned(),
            );
        }
        let mut hashes = Vec::new();
        for (k, item) in array.iter().enumerate() {
            let key_path = format!("{path}.{field}[{k}]");
            match item.get_ref() {
                DeValue::String(text) => match KeyHash::parse(text) {
                    Ok(hash) => hashes.push(hash),
                    Err(message) => self.problem(&key_path, Some(item.span()), message),
                },
                other => self.problem(
                    &key_path,
                    Some(item.span()),
                    format!(
                        "must be a string \"sha256:<hex>\", got a {}",
                        other.type_str()
                    ),
                ),
            }
        }
        (hashes.len() == array.len() && !(array.is_empty() && field == "keys")).then_some(hashes)
    }

    fn required_string(
        &mut self,
        path: &str,
        table: &DeTable<'_>,
        field: &str,
        site_span: &Range<usize>,
    ) -> Option<(String, Range<usize>)> {
        match table.get(field) {
            None => {
                self.problem(
                    &format!("{path}.{field}"),
                    Some(site_span.clone()),
                    format!("missing field {field:?}"),
                );
                None
            }
            Some(value) => match value.get_ref().as_str() {
                Some(text) => Some((text.to_owned(), value.span())),
                None => {
                    self.problem(
                        &format!("{path}.{field}"),
                        Some(value.span()),
                        format!(
                            "{field} must be a string, got a {}",
                            value.get_ref().type_str()
                        ),
                    );
                    None
                }
            },
        }
    }
}

/// `text` as a browser sends it in `Origin`: `http` or `https`, a host, a port only when not
/// the scheme's default, nothing else (the WHATWG URL parser reads it).
///
/// # Errors
///
/// A message naming the value and what to write instead.
fn origin_of(text: &str) -> Result<String, String> {
    let shown: String = text.chars().take(200).collect();
    let url = url::Url::parse(text)
        .map_err(|e| format!("origin {shown:?} is not a URL ({e}); write scheme and host, such as \"https://editor.example.com\""))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "origin {shown:?} has scheme {:?}; only http and https pages send CORS requests",
            url.scheme()
        ));
    }
    let origin = url.origin().ascii_serialization();
    if origin != text {
        return Err(format!(
            "origin {shown:?} is not an origin as browsers send it; write {origin:?} (scheme, host and a non-default port; no path, slash, query or upper case)"
        ));
    }
    Ok(origin)
}

/// `unknown field "rate_limt"; did you mean "rate_limit"?`, with the core's suggestion (the
/// same as `nudge-rules check` makes for a config).
fn unknown_field(name: &str, expected: &[&'static str]) -> String {
    match nudge_rules::suggest_name(name, expected) {
        Some(e) => format!("unknown field {name:?}; did you mean {e:?}?"),
        None => format!(
            "unknown field {name:?}; expected one of {}",
            expected
                .iter()
                .map(|e| format!("{e:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// 1-based line and column (in characters) of a byte offset, as the core counts them.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let (line, column) = nudge_rules::line_column(text, offset.min(text.len())).unwrap_or((1, 1));
    (line as usize, column as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with_config() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), r#"{"version":1}"#).unwrap();
        dir
    }

    fn hash(n: u8) -> String {
        KeyHash::of_key(&format!("sk_test_{}", "k".repeat(15) + &n.to_string())).to_string()
    }

    #[test]
    fn a_valid_file() {
        let dir = dir_with_config();
        let text = format!(
            "[[site]]\nid = \"a\"\nconfig = \"a.json\"\nkeys = [\"{}\"]\n\n[[site]]\nid = \"b-2\"\nconfig = \"a.json\"\nrate_limit = 5\nkeys = [\"{}\", \"{}\"]\n",
            hash(1),
            hash(2),
            hash(3)
        );
        let sites = parse(&text, dir.path()).unwrap();
        assert_eq!(sites.len(), 2);
        assert_eq!(sites[0].rate_limit, DEFAULT_RATE_LIMIT);
        assert_eq!(sites[1].rate_limit, 5);
        assert_eq!(sites[1].keys.len(), 2);
        assert!(
            matches!(&sites[0].source, ConfigSource::File(p) if *p == dir.path().join("a.json"))
        );
    }

    #[test]
    fn every_problem_with_path_line_and_column() {
        let dir = dir_with_config();
        let text = format!(
            "sitez = 1\n[[site]]\nid = \"a b\"\nconfig = \"missing.json\"\nrate_limt = 5\nrate_limit = 0\nkeys = [\"sk_live_abcdefghijklmnopq\", 7]\n\n[[site]]\nid = \"c\"\nconfig = \"a.json\"\nkeys = [\"{h}\", \"{h}\"]\n",
            h = hash(1)
        );
        let problems = parse(&text, dir.path()).unwrap_err();
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let expect = [
            "sitez: unknown field \"sitez\"; did you mean \"site\"? (line 1, column 1)",
            "site[0].rate_limt: unknown field \"rate_limt\"; did you mean \"rate_limit\"? (line 5, column 1)",
            "site[0].id: site id \"a b\" contains ' '",
            "site[0].config: cannot read",
            "site[0].rate_limit: rate_limit must be an integer from 1 to 100000 (requests per rolling 60 s per key), got 0 (line 6, column 14)",
            "site[0].keys[0]: this is an API key in clear",
            "site[0].keys[1]: must be a string",
            "site[1].keys[1]: key ",
        ];
        assert_eq!(shown.len(), expect.len(), "{shown:#?}");
        for (got, want) in shown.iter().zip(expect) {
            assert!(
                got.starts_with(want),
                "{got}\n  does not start with\n{want}"
            );
        }
        assert!(!shown.iter().any(|s| s.contains("abcdefghijklmnopq")));
    }

    #[test]
    fn syntax_errors_and_empty_files() {
        let problems = parse("[[site]\nid = ", Path::new(".")).unwrap_err();
        assert!(
            problems[0].message.starts_with("TOML syntax:"),
            "{problems:?}"
        );
        assert_eq!(problems[0].line, Some(1));
        let problems = parse("", Path::new(".")).unwrap_err();
        assert_eq!(problems[0].path, "site");
        let problems = parse("site = 3", Path::new(".")).unwrap_err();
        assert!(
            problems[0].message.contains("array of tables"),
            "{problems:?}"
        );
    }

    #[test]
    fn duplicate_site_ids() {
        let dir = dir_with_config();
        let text = format!(
            "[[site]]\nid = \"a\"\nconfig = \"a.json\"\nkeys = [\"{}\"]\n[[site]]\nid = \"a\"\nconfig = \"a.json\"\nkeys = [\"{}\"]\n",
            hash(1),
            hash(2)
        );
        let problems = parse(&text, dir.path()).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].to_string(),
            "site[1].id: site id \"a\" is already used by site[0] (line 6, column 6)"
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\néé = 1", 7), (2, 3));
        assert_eq!(line_column("x", 0), (1, 1));
    }
}
