//! The served API document: `docs/openapi.yaml`, the hand-written contract, built into the
//! binary and served as JSON on the admin listener's `/openapi.json` (SPEC 7 "Operations").

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// The text of `docs/openapi.yaml`.
pub const OPENAPI_YAML: &str = include_str!("../../docs/openapi.yaml");

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
