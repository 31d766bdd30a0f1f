//! Responses: JSON with a status, converted to the API Gateway v2 shape.

use aws_lambda_events::apigw::ApiGatewayV2httpResponse;
use aws_lambda_events::encodings::Body;
use aws_lambda_events::http::header::{HeaderValue, CONTENT_TYPE};
use serde::Serialize;

use crate::ApiError;

/// A successful answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// JSON body (empty for 204).
    pub body: String,
    /// Extra headers (`content-type` is always `application/json`).
    pub headers: Vec<(&'static str, &'static str)>,
}

/// Header on an answer replayed for a repeated `Idempotency-Key`: the
/// request was not carried out again.
pub const REPLAYED_HEADER: &str = "idempotency-replayed";

impl Response {
    /// `status` with `value` as JSON.
    pub fn json<T: Serialize>(status: u16, value: &T) -> Result<Self, ApiError> {
        let body = serde_json::to_string(value).map_err(ApiError::internal)?;
        Ok(Response { status, body, headers: Vec::new() })
    }

    /// 204, no body.
    pub fn no_content() -> Self {
        Response { status: 204, body: String::new(), headers: Vec::new() }
    }

    /// The same answer with one more header.
    pub fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }

    /// The same answer, marked as replayed for a repeated `Idempotency-Key`.
    pub fn replayed(self) -> Self {
        self.with_header(REPLAYED_HEADER, "true")
    }

    /// 200 with `value`.
    pub fn ok<T: Serialize>(value: &T) -> Result<Self, ApiError> {
        Self::json(200, value)
    }

    /// 201 with the created `value`.
    pub fn created<T: Serialize>(value: &T) -> Result<Self, ApiError> {
        Self::json(201, value)
    }
}

/// A list page: `{"items": [...], "nextCursor": "..." | null}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListBody<T> {
    /// This page's items.
    pub items: Vec<T>,
    /// Cursor of the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// Converts a handler's outcome into the event API Gateway expects.
pub fn to_event(outcome: Result<Response, ApiError>) -> ApiGatewayV2httpResponse {
    let (status, body, headers) = match outcome {
        Ok(r) => (r.status, r.body, r.headers),
        Err(e) => (e.status, e.body(), Vec::new()),
    };
    let mut resp = ApiGatewayV2httpResponse::default();
    resp.status_code = i64::from(status);
    resp.headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in headers {
        resp.headers.insert(name, HeaderValue::from_static(value));
    }
    if !body.is_empty() {
        resp.body = Some(Body::Text(body));
    }
    resp
}
