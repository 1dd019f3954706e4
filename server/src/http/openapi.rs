//! The served API document: `docs/openapi.yaml`, the hand-written contract, built into the
//! binary and served as JSON on the admin listener's `/openapi.json` (docs/contract/server.md "Operations").

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// The text of `docs/openapi.yaml`.
pub const OPENAPI_YAML: &str = include_str!("../../../docs/openapi.yaml");

/// `docs/openapi.yaml` as a JSON document.
///
/// # Errors
///
/// The YAML does not parse, or holds something JSON cannot (an alias, a non-finite number).
pub fn openapi_json() -> Result<String, String> {
    let documents =
        YamlLoader::load_from_str(OPENAPI_YAML).map_err(|e| format!("docs/openapi.yaml: {e}"))?;
    let [document] = documents.as_slice() else {
        return Err(format!(
            "docs/openapi.yaml holds {} YAML documents, not one",
            documents.len()
        ));
    };
    Ok(to_json(document)?.to_string())
}

fn to_json(yaml: &Yaml) -> Result<Value, String> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Integer(i) => Value::Number((*i).into()),
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("docs/openapi.yaml: {text} is not a finite number"))?,
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Hash(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                let key = match key {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    other => return Err(format!("docs/openapi.yaml: unsupported key {other:?}")),
                };
                map.insert(key, to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err("docs/openapi.yaml: aliases are not supported".to_owned());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_converts_and_names_the_preview_route() {
        let json: Value = serde_json::from_str(&openapi_json().unwrap()).unwrap();
        assert!(json["openapi"].as_str().unwrap().starts_with("3."));
        assert!(json["paths"]["/v1/nudges/preview"]["post"].is_object());
        // Status codes are strings in JSON, as OpenAPI requires.
        assert!(json["paths"]["/v1/nudges/preview"]["post"]["responses"]["429"].is_object());
    }

    /// Every schema with `nullable` also has a `type` (OpenAPI 3.0 ignores `nullable` without
    /// one; redocly's nullable-type-sibling rule).
    #[test]
    fn nullable_always_has_a_type() {
        fn walk(value: &Value, path: &str, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    if map.contains_key("nullable") && !map.contains_key("type") {
                        found.push(path.to_owned());
                    }
                    for (k, v) in map {
                        walk(v, &format!("{path}/{k}"), found);
                    }
                }
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        walk(v, &format!("{path}/{i}"), found);
                    }
                }
                _ => {}
            }
        }
        let json: Value = serde_json::from_str(&openapi_json().unwrap()).unwrap();
        let mut found = Vec::new();
        walk(&json, "#", &mut found);
        assert!(found.is_empty(), "nullable without type: {found:?}");
    }

    /// What the server refuses, the schema does not accept (issue 35): a config needs its
    /// `version` (docs/contract/config.md), ids in paths have the server's form, times the server's range.
    #[test]
    fn the_schema_is_as_strict_as_the_server() {
        let json: Value = serde_json::from_str(&openapi_json().unwrap()).unwrap();
        let schemas = &json["components"]["schemas"];
        assert_eq!(
            schemas["Config"]["required"],
            serde_json::json!(["version"])
        );
        assert_eq!(
            schemas["Config"]["properties"]["version"]["enum"],
            serde_json::json!([1])
        );
        for (body, field) in [("BacktestRequest", "config"), ("PublishRequest", "config")] {
            assert_eq!(
                schemas[body]["properties"][field]["oneOf"][0]["$ref"],
                "#/components/schemas/Config",
                "{body}.{field}"
            );
        }
        let path_pattern = |path: &str| {
            json["paths"][path]["get"]["parameters"][0]["schema"]["pattern"]
                .as_str()
                .map(str::to_owned)
        };
        assert_eq!(
            path_pattern("/v1/sessions/{id}").as_deref(),
            Some("^sess_[A-Za-z0-9_-]{1,64}$")
        );
        assert!(path_pattern("/v1/config/versions/{n}").is_some());
        let time = regex::Regex::new(schemas["TimeBound"]["pattern"].as_str().unwrap()).unwrap();
        for (text, server) in [
            ("2026-11-24T10:00:00Z", true),
            ("2026-11-24t10:00:00.123456789+01:00", true),
            ("0000-01-01T00:00:00Z", false),
            ("9999-12-31T00:00:00Z", false),
            ("2026-13-01T00:00:00Z", false),
            ("2026-11-24T24:00:00Z", false),
            ("2026-11-24T10:60:00Z", false),
            ("2026-11-24T10:00:60Z", false),
        ] {
            assert_eq!(time.is_match(text), server, "{text}");
            let parsed = crate::http::query::read_time("from", text).is_ok();
            assert!(
                parsed || !time.is_match(text),
                "{text} matches but is refused"
            );
        }
    }

    #[test]
    fn the_document_describes_the_relay() {
        let json: Value = serde_json::from_str(&openapi_json().unwrap()).unwrap();
        let relay = &json["paths"]["/v1/events"];
        let post = &relay["post"];
        // Both content types a storefront sends (a beacon sends text/plain).
        for media_type in ["application/json", "text/plain"] {
            assert_eq!(
                post["requestBody"]["content"][media_type]["schema"]["$ref"],
                "#/components/schemas/EventBatch"
            );
        }
        // The publishable key, as Bearer or in the body.
        assert_eq!(post["security"][0]["publishableKey"], Value::Array(vec![]));
        assert!(json["components"]["securitySchemes"]["publishableKey"].is_object());
        for status in ["202", "400", "401", "413", "415", "429", "503"] {
            assert!(post["responses"][status].is_object(), "{status}");
        }
        for header in ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining"] {
            assert!(
                post["responses"]["429"]["headers"][header].is_object(),
                "{header}"
            );
        }
        assert!(relay["options"]["responses"]["204"].is_object());
        let batch = &json["components"]["schemas"]["EventBatch"];
        assert_eq!(batch["properties"]["events"]["maxItems"], 500);
        assert_eq!(
            json["components"]["schemas"]["RelayEvent"]["discriminator"]["propertyName"],
            "type"
        );
    }
}
