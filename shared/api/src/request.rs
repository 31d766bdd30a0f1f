//! The incoming request: an API Gateway HTTP API (payload v2) event with
//! typed accessors that turn every malformed input into a 4xx.

use std::fmt::Display;
use std::str::FromStr;

use aws_lambda_events::apigw::ApiGatewayV2httpRequest;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use keyschema::ids::UserId;
use serde::de::DeserializeOwned;

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

/// Whether a groups claim names a group. Accepts `[a b]`, `[a, b]`,
/// `["a","b"]` and a bare `a`.
pub fn groups_contain(claim: &str, group: &str) -> bool {
    claim
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(|c: char| c == ',' || c.is_whitespace())
        .map(|g| g.trim_matches('"'))
        .any(|g| g == group)
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
        match self.event.query_string_parameters.first(name) {
            None => Ok(None),
            Some(raw) => raw.parse().map(Some).map_err(|e| ApiError::bad_request(format!("{name}: {e}"))),
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
            Some(raw) => raw
                .parse::<u16>()
                .ok()
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

    /// The JSON body as `T`. Types reject unknown fields; errors name the
    /// offending field.
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
        serde_path_to_error::deserialize(de).map_err(|e| {
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
        })
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
        assert!(groups_contain("[admin]", "admin"));
        assert!(groups_contain("[ops admin]", "admin"));
        assert!(groups_contain("[ops, admin]", "admin"));
        assert!(groups_contain("[\"admin\"]", "admin"));
        assert!(groups_contain("admin", "admin"));
        assert!(!groups_contain("[administrators]", "admin"));
        assert!(!groups_contain("", "admin"));
    }
}
