//! Reads `template.yaml`: which function serves which HTTP API route, and
//! whether the route has the JWT authorizer. The local stack routes exactly
//! as API Gateway would, and tests check the template against the code.

use std::collections::HashMap;
use std::path::Path;

use serde_norway::Value;

/// One `HttpApi` event of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// `AWS::Serverless::Function` logical id, such as `CatalogFunction`.
    pub function: String,
    /// HTTP method, upper case.
    pub method: String,
    /// Path template, such as `/products/{productId}`.
    pub path: String,
    /// Whether the JWT authorizer guards it (`Auth.Authorizer` is not `NONE`).
    pub authorized: bool,
}

impl Route {
    /// The API Gateway route key, such as `GET /products/{productId}`.
    pub fn key(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// Matches a request path; returns the path parameters.
    pub fn matches(&self, method: &str, path: &str) -> Option<HashMap<String, String>> {
        if !self.method.eq_ignore_ascii_case(method) {
            return None;
        }
        let (mut t, mut p) = (self.path.split('/'), path.split('/'));
        let mut params = HashMap::new();
        loop {
            match (t.next(), p.next()) {
                (None, None) => return Some(params),
                (Some(ts), Some(ps)) if ts.starts_with('{') && ts.ends_with('}') => {
                    if ps.is_empty() {
                        return None;
                    }
                    params.insert(ts[1..ts.len() - 1].to_owned(), percent_decode(ps)?);
                }
                (Some(ts), Some(ps)) if ts == ps => {}
                _ => return None,
            }
        }
    }
}

/// Decodes `%XX` escapes of a path segment.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The parsed template.
#[derive(Debug)]
pub struct Template {
    /// The whole document.
    pub doc: Value,
}

impl Template {
    /// Reads and parses a template file.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc = serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Template { doc })
    }

    /// The project's `template.yaml`.
    pub fn project() -> Result<Self, String> {
        Self::load(&crate::dynamodb_local::workspace_root().join("template.yaml"))
    }

    /// A resource's `Properties`.
    pub fn properties(&self, logical_id: &str) -> Option<&Value> {
        self.doc.get("Resources")?.get(logical_id)?.get("Properties")
    }

    /// Logical ids of resources of a type.
    pub fn resources_of_type(&self, kind: &str) -> Vec<String> {
        let Some(Value::Mapping(resources)) = self.doc.get("Resources") else { return Vec::new() };
        resources
            .iter()
            .filter(|(_, r)| r.get("Type").and_then(Value::as_str) == Some(kind))
            .filter_map(|(id, _)| id.as_str().map(str::to_owned))
            .collect()
    }

    /// Every `HttpApi` route of every function.
    pub fn routes(&self) -> Vec<Route> {
        let mut routes = Vec::new();
        for function in self.resources_of_type("AWS::Serverless::Function") {
            let Some(Value::Mapping(events)) = self.properties(&function).and_then(|p| p.get("Events")) else {
                continue;
            };
            for event in events.values() {
                if event.get("Type").and_then(Value::as_str) != Some("HttpApi") {
                    continue;
                }
                let Some(props) = event.get("Properties") else { continue };
                let text = |k: &str| props.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                let authorizer = props.get("Auth").and_then(|a| a.get("Authorizer")).and_then(Value::as_str);
                routes.push(Route {
                    function: function.clone(),
                    method: text("Method").to_ascii_uppercase(),
                    path: text("Path"),
                    authorized: authorizer != Some("NONE"),
                });
            }
        }
        routes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_matching_extracts_parameters() {
        let r = Route { function: "F".into(), method: "GET".into(), path: "/a/{id}/b".into(), authorized: true };
        assert_eq!(r.matches("GET", "/a/x%20y/b").unwrap()["id"], "x y");
        assert!(r.matches("POST", "/a/x/b").is_none());
        assert!(r.matches("GET", "/a//b").is_none());
        assert!(r.matches("GET", "/a/x/b/c").is_none());
        assert!(r.matches("GET", "/a/x").is_none());
    }
}
