//! The incoming request: an API Gateway HTTP API (payload v2) event with
//! typed accessors that turn every malformed input into a 4xx.

use std::fmt::Display;
use std::str::FromStr;

use aws_lambda_events::apigw::ApiGatewayV2httpRequest;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use domain::ids::UserId;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::ApiError;

/// The largest body any route accepts.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Claim naming the caller.
pub const SUB_CLAIM: &str = "sub";
/// Claim listing the caller's groups; API Gateway hands arrays over as a
/// string such as `[admin]` or `[admin ops]`.
pub const GROUPS_CLAIM: &str = "cognito:groups";
/// The group whose members are admins.
pub const ADMIN_GROUP: &str = "admin";

/// Who is calling, from the claims the JWT authorizer verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The `sub` claim.
    pub user_id: UserId,
    /// Member of the `admin` group.
    pub admin: bool,
}

impl Caller {
    /// 403 unless an admin.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.admin {
            Ok(())
        } else {
            Err(ApiError::forbidden("admin only"))
        }
    }

    /// Whether the caller is this user.
    pub fn is(&self, user: &UserId) -> bool {
        &self.user_id == user
    }

    /// 403 unless the caller is this user or an admin.
    pub fn require_self_or_admin(&self, user: &UserId) -> Result<(), ApiError> {
        if self.is(user) || self.admin {
            Ok(())
        } else {
            Err(ApiError::forbidden("only the user or an admin may do this"))
        }
    }
}

/// The group names of a `cognito:groups` claim, in the two forms API
/// Gateway's JWT authorizer is reported to hand over: a JSON array
/// (`["admin","partners"]`) or the bracketed, space-separated string
/// (`[admin partners]`). Anything else, or a name that could be read two
/// ways (a comma, a quote, a bracket or whitespace inside it), gives no
/// groups at all: a claim that parses ambiguously grants nothing.
pub fn groups(claim: &str) -> Vec<String> {
    let claim = claim.trim();
    let clean =
        |g: &str| !g.is_empty() && !g.chars().any(|c| matches!(c, ',' | '"' | '[' | ']' | '\\') || c.is_whitespace());
    if let Ok(names) = serde_json::from_str::<Vec<String>>(claim) {
        return if names.iter().all(|g| clean(g)) { names } else { Vec::new() };
    }
    match claim.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
        Some(inner) => {
            let names: Vec<String> = inner.split_whitespace().map(str::to_owned).collect();
            if names.iter().all(|g| clean(g)) {
                names
            } else {
                Vec::new()
            }
        }
        None => Vec::new(),
    }
}

/// Whether a groups claim names `group` (a whole name; see [`groups`]).
pub fn groups_contain(claim: &str, group: &str) -> bool {
    groups(claim).iter().any(|g| g == group)
}

/// Pagination parameters of a list route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageParams {
    /// 1-100, default 20.
    pub limit: u16,
    /// Opaque cursor from the previous page.
    pub cursor: Option<String>,
}

/// A request routed to a handler.
#[derive(Debug)]
pub struct Request {
    event: ApiGatewayV2httpRequest,
}

impl From<ApiGatewayV2httpRequest> for Request {
    fn from(event: ApiGatewayV2httpRequest) -> Self {
        Request { event }
    }
}

impl Request {
    /// The route key, such as `GET /products/{productId}`.
    pub fn route_key(&self) -> &str {
        self.event.route_key.as_deref().or(self.event.request_context.route_key.as_deref()).unwrap_or("")
    }

    /// The event as received.
    pub fn event(&self) -> &ApiGatewayV2httpRequest {
        &self.event
    }

    /// The caller, or 401.
    pub fn caller(&self) -> Result<Caller, ApiError> {
        self.optional_caller().ok_or_else(ApiError::unauthorized)
    }

    /// The caller, if the request carries verified claims (public routes).
    pub fn optional_caller(&self) -> Option<Caller> {
        let claims = &self.event.request_context.authorizer.as_ref()?.jwt.as_ref()?.claims;
        let user_id = claims.get(SUB_CLAIM)?.parse().ok()?;
        let admin = claims.get(GROUPS_CLAIM).is_some_and(|g| groups_contain(g, ADMIN_GROUP));
        Some(Caller { user_id, admin })
    }

    /// An admin caller, or 401/403.
    pub fn admin(&self) -> Result<Caller, ApiError> {
        let caller = self.caller()?;
        caller.require_admin()?;
        Ok(caller)
    }

    /// A path parameter parsed into its type; 400 if malformed.
    pub fn path<T>(&self, name: &str) -> Result<T, ApiError>
    where
        T: FromStr,
        T::Err: Display,
    {
        let raw = self.event.path_parameters.get(name).map(String::as_str).unwrap_or_default();
        raw.parse().map_err(|e| ApiError::bad_request(format!("{e}")))
    }

    /// A query-string parameter parsed into its type, if present; 400 if malformed.
    pub fn query<T>(&self, name: &str) -> Result<Option<T>, ApiError>
    where
        T: FromStr,
        T::Err: Display,
    {
        // API Gateway joins a repeated parameter's values with commas, and
        // the event type splits them again: joined back, a value that
        // contains a comma reads whole.
        match self.event.query_string_parameters.all(name) {
            None => Ok(None),
            Some(values) => {
                values.join(",").parse().map(Some).map_err(|e| ApiError::bad_request(format!("{name}: {e}")))
            }
        }
    }

    /// 400 if the query string names a parameter outside `allowed`.
    pub fn only_query_params(&self, allowed: &[&str]) -> Result<(), ApiError> {
        match self.event.query_string_parameters.iter().find(|(k, _)| !allowed.contains(k)) {
            Some((k, _)) => Err(ApiError::bad_request(format!(
                "unknown query parameter `{k}`; expected one of: {}",
                allowed.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// `limit` and `cursor`, after checking the query string has only them
    /// and `extra`.
    pub fn page(&self, extra: &[&str]) -> Result<PageParams, ApiError> {
        let mut allowed = vec!["limit", "cursor"];
        allowed.extend_from_slice(extra);
        self.only_query_params(&allowed)?;
        let limit = match self.event.query_string_parameters.first("limit") {
            None => 20,
            // Decimal digits only, as an integer is written: no sign, no
            // leading zeros, no spaces.
            Some(raw) => Some(raw)
                .filter(|r| r.bytes().all(|b| b.is_ascii_digit()) && !r.starts_with('0'))
                .and_then(|r| r.parse::<u16>().ok())
                .filter(|l| (1..=100).contains(l))
                .ok_or_else(|| ApiError::bad_request("limit must be an integer from 1 to 100"))?,
        };
        let cursor = self.event.query_string_parameters.first("cursor").map(str::to_owned);
        Ok(PageParams { limit, cursor })
    }

    /// A header value (case-insensitive name), if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.event.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON body as `T`. Types reject unknown fields; the body may not
    /// name a member twice nor give any member as `null` (an optional field
    /// is left out); a number with a zero fraction (`2.0`) is an integer, as
    /// in JSON Schema. Errors name the offending field.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        let raw = self.event.body.as_deref().unwrap_or_default();
        let bytes = if self.event.is_base64_encoded {
            STANDARD.decode(raw).map_err(|_| ApiError::bad_request("body is not valid base64"))?
        } else {
            raw.as_bytes().to_vec()
        };
        if bytes.len() > MAX_BODY_BYTES {
            return Err(ApiError::too_large(MAX_BODY_BYTES));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::bad_request("a JSON body is required"));
        }
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let Strict(value) = serde_path_to_error::deserialize(&mut *de).map_err(body_error)?;
        // Exactly one value: only whitespace may follow it.
        de.end().map_err(|_| ApiError::bad_request("invalid body: one JSON object, with nothing after it"))?;
        if !value.is_object() {
            return Err(ApiError::bad_request("invalid body: must be a JSON object"));
        }
        if let Some(path) = null_member(&value, String::new()) {
            return Err(ApiError::bad_request(format!(
                "invalid body: `{path}`: must not be null (leave an optional field out)"
            )));
        }
        serde_path_to_error::deserialize(value).map_err(body_error)
    }
}

/// The 400 for a body that is not JSON or not a `T`.
fn body_error(e: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    let what = match inner.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "malformed JSON".to_owned(),
        _ => strip_position(&inner.to_string()),
    };
    if path == "." || path.is_empty() {
        ApiError::bad_request(format!("invalid body: {what}"))
    } else {
        ApiError::bad_request(format!("invalid body: `{path}`: {what}"))
    }
}

/// A JSON value read strictly: an object naming a member twice is an error
/// (the typed structs refuse it too, so reading through a value keeps that),
/// and a finite number with a zero fraction within 64 bits becomes an
/// integer.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // 2^64 and -2^63 are exact in f64; the casts below are exact within them.
        Ok(if v.is_finite() && v.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&v) {
            Value::from(v as u64)
        } else if v.is_finite() && v.fract() == 0.0 && (-9_223_372_036_854_775_808.0..0.0).contains(&v) {
            Value::from(v as i64)
        } else {
            Value::from(v)
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            let Strict(value) = map.next_value()?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

/// Where `value` holds a `null` inside an object or array, as a path such as
/// `items[0].qty`.
fn null_member(value: &Value, path: String) -> Option<String> {
    let join = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    match value {
        Value::Object(members) => members.iter().find_map(|(k, v)| match v {
            Value::Null => Some(join(k)),
            v => null_member(v, join(k)),
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| match v {
            Value::Null => Some(format!("{path}[{i}]")),
            v => null_member(v, format!("{path}[{i}]")),
        }),
        _ => None,
    }
}

/// serde_json appends " at line L column C"; callers do not need it.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_claim_forms() {
        for yes in
            ["[admin]", "[ops admin]", "[ops  admin ]", "[\"admin\"]", "[\"ops\",\"admin\"]", " [\"ops\", \"admin\"] "]
        {
            assert!(groups_contain(yes, "admin"), "{yes}");
        }
        for no in [
            "[\"partners,admin\"]",
            "[\"\\\"admin\\\"\"]",
            "[partners,admin]",
            "[ops, admin]",
            "[\"admin]",
            "[admin\"]",
            "[administrators]",
            "[\"admin \"]",
            "[[admin]]",
            "admin",
            "admin,partners",
            "[]",
            "",
            "[\"admin\",\"a b\"]",
        ] {
            assert!(!groups_contain(no, "admin"), "{no}");
        }
        assert_eq!(groups("[a b]"), ["a", "b"]);
    }

    #[test]
    fn a_body_is_one_json_object() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Delta {
            delta: i64,
        }
        let read = |b: &str| with_body(b).json::<Delta>().map(|_| ()).map_err(|e| e.message);
        assert_eq!(read("{\"delta\":1}\n "), Ok(()));
        for bad in
            ["{\"delta\":1}{\"delta\":500}", "{\"delta\":1} garbage", "{\"delta\":1},", "[2]", "[{\"delta\":1}]", "7"]
        {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    fn with_body(body: &str) -> Request {
        let mut event = ApiGatewayV2httpRequest::default();
        event.body = Some(body.to_owned());
        Request::from(event)
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Body {
        n: u32,
        s: Option<String>,
        list: Option<Vec<u8>>,
    }

    #[test]
    fn bodies_are_read_as_the_contract_reads_them() {
        let ok = |b: &str| with_body(b).json::<Body>().map_err(|e| e.message);
        assert_eq!(ok(r#"{"n": 2.0}"#), Ok(Body { n: 2, s: None, list: None }), "2.0 is an integer");
        assert_eq!(ok(r#"{"n": 2, "s": "x"}"#), Ok(Body { n: 2, s: Some("x".into()), list: None }));
        assert!(ok(r#"{"n": 2.5}"#).unwrap_err().contains("`n`"));
        assert!(ok(r#"{"n": 1e30}"#).unwrap_err().contains("`n`"));
        assert!(ok(r#"{"n": 2, "s": null}"#).unwrap_err().contains("`s`: must not be null"));
        assert!(ok(r#"{"n": 2, "list": [1, null]}"#).unwrap_err().contains("`list[1]`: must not be null"));
        assert!(ok(r#"{"n": 2, "n": 3}"#).unwrap_err().contains("duplicate field `n`"));
        assert!(ok(r#"{"n": 2, "x": 1}"#).unwrap_err().contains("unknown field `x`"));
        assert!(ok(r#"{"n": "#).unwrap_err().contains("malformed JSON"));
        assert!(ok("null").unwrap_err().contains("invalid body"));
        assert!(ok(" ").unwrap_err().contains("body is required"));
    }

    #[test]
    fn limit_is_written_as_an_integer() {
        let limit = |raw: &str| {
            let mut event = ApiGatewayV2httpRequest::default();
            event.query_string_parameters =
                std::collections::HashMap::from([("limit".to_owned(), raw.to_owned())]).into();
            Request::from(event).page(&[]).map(|p| p.limit).map_err(|e| e.status)
        };
        assert_eq!(limit("5"), Ok(5));
        assert_eq!(limit("100"), Ok(100));
        for bad in ["0", "101", "+5", "05", " 5", "5 ", "1e1", "", "-1", "65541"] {
            assert_eq!(limit(bad), Err(400), "{bad:?}");
        }
    }
}
