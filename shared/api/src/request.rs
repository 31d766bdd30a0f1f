//! The incoming request: an API Gateway HTTP API (payload v2) event with
//! typed accessors that turn every malformed input into a 4xx.

use std::fmt::Display;
use std::str::FromStr;

use crate::claims::{groups_contain, Caller, ADMIN_GROUP, GROUPS_CLAIM, SUB_CLAIM};
use crate::ApiError;
use aws_lambda_events::apigw::ApiGatewayV2httpRequest;

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
        // Read whole, as `query` reads: `limit=5,abc` is not a limit of 5.
        let limit = match self.query::<String>("limit")?.as_deref() {
            None => 20,
            // Decimal digits only, as an integer is written: no sign, no
            // leading zeros, no spaces.
            Some(raw) => Some(raw)
                .filter(|r| r.bytes().all(|b| b.is_ascii_digit()) && !r.starts_with('0'))
                .and_then(|r| r.parse::<u16>().ok())
                .filter(|l| (1..=100).contains(l))
                .ok_or_else(|| ApiError::bad_request("limit must be an integer from 1 to 100"))?,
        };
        let cursor = self.query::<String>("cursor")?;
        Ok(PageParams { limit, cursor })
    }

    /// A header value (case-insensitive name), if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.event.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// API Gateway joins a repeated parameter's values with commas and the
    /// event type splits them again: `limit=5,abc` is not a limit of 5, and
    /// a cursor with text after a comma is not the cursor before it (a
    /// black-box pass found both read up to the comma).
    #[test]
    fn a_page_parameter_is_read_whole() {
        let page = |name: &str, values: &[&str]| {
            let mut event = ApiGatewayV2httpRequest::default();
            let values = values.iter().map(|v| (*v).to_owned()).collect::<Vec<_>>();
            event.query_string_parameters = std::collections::HashMap::from([(name.to_owned(), values)]).into();
            Request::from(event).page(&[]).map_err(|e| e.status)
        };
        assert_eq!(page("limit", &["5", "abc"]).map(|p| p.limit), Err(400));
        assert_eq!(page("limit", &["5", "1000"]).map(|p| p.limit), Err(400));
        assert_eq!(page("cursor", &["abc.def", "more"]).map(|p| p.cursor), Ok(Some("abc.def,more".to_owned())));
    }
}
