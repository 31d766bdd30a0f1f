//! API errors: a status, a stable machine-readable code and a message safe
//! to show. Internal causes are logged, never sent.

use std::fmt;

use serde::Serialize;
use store::StoreError;

/// An error answer: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Stable code, such as `not_found`.
    pub code: &'static str,
    /// Human-readable message for the caller.
    pub message: String,
    /// What really happened (logged, not sent) for 5xx errors.
    pub internal: Option<String>,
}

impl ApiError {
    fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), internal: None }
    }

    /// 400: the request is malformed or fails validation.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "bad_request", message)
    }

    /// 401: no verified identity.
    pub fn unauthorized() -> Self {
        Self::new(401, "unauthorized", "a valid bearer token is required")
    }

    /// 403: the caller may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "forbidden", message)
    }

    /// 404: no such resource.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "not_found", message)
    }

    /// 409: the request conflicts with the current state.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(409, "conflict", message)
    }

    /// 422: the request is well-formed but cannot be accepted as it is
    /// (such as an idempotency key reused with another request).
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(422, code, message)
    }

    /// 413: the body is larger than any valid request.
    pub fn too_large(limit: usize) -> Self {
        Self::new(413, "payload_too_large", format!("request body exceeds {limit} bytes"))
    }

    /// 503: the table is throttling or unreachable; the caller may retry.
    pub fn unavailable() -> Self {
        Self::new(503, "unavailable", "the service is busy; retry shortly")
    }

    /// 500 with the cause kept for the log.
    pub fn internal(cause: impl fmt::Display) -> Self {
        ApiError { internal: Some(cause.to_string()), ..Self::new(500, "internal", "internal error") }
    }

    /// The JSON body.
    pub fn body(&self) -> String {
        #[derive(Serialize)]
        struct Body<'a> {
            error: Inner<'a>,
        }
        #[derive(Serialize)]
        struct Inner<'a> {
            code: &'a str,
            message: &'a str,
        }
        serde_json::to_string(&Body { error: Inner { code: self.code, message: &self.message } })
            .unwrap_or_else(|_| r#"{"error":{"code":"internal","message":"internal error"}}"#.to_owned())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl From<keyschema::SchemaError> for ApiError {
    /// A key that cannot be derived is a bug, never the caller's input.
    fn from(err: keyschema::SchemaError) -> Self {
        ApiError::internal(err)
    }
}

impl From<StoreError> for ApiError {
    /// The classification every handler shares. Handlers map the failed
    /// conditions they expect (a 404 or a named 409) before this applies.
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::ConditionFailed(_) | StoreError::TransactionCanceled(_) => {
                ApiError::conflict("the resource changed concurrently; read it again and retry")
            }
            e if e.is_retryable() => ApiError { internal: Some(e.to_string()), ..ApiError::unavailable() },
            e if e.is_token_reused() => crate::idempotency::reused(),
            StoreError::ForeignStartKey => ApiError::bad_request("invalid cursor"),
            other => ApiError::internal(other),
        }
    }
}
