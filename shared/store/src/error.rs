//! Store errors, classified so callers can answer the right status: a failed
//! condition is a business outcome (409/404), throttling is a 503, anything
//! else is internal.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// A name for a transaction's action, such as `"guard"` or `"listing"`.
pub type ActionName = std::borrow::Cow<'static, str>;

/// Why one action of a cancelled transaction did not apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Cancellation {
    /// The action's name, as given to the transaction.
    pub action: ActionName,
    /// DynamoDB's reason code (`ConditionalCheckFailed`,
    /// `TransactionConflict`, ...); `None` where the action was fine.
    pub code: Option<String>,
    /// The item as it was, for a failed condition (`None` if absent).
    pub item: Option<HashMap<String, AttributeValue>>,
}

/// What went wrong talking to the table.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A write's condition expression was false. Carries the item as it was,
    /// when the request asked for it (`ReturnValuesOnConditionCheckFailure`).
    #[error("conditional check failed")]
    ConditionFailed(Option<HashMap<String, AttributeValue>>),
    /// A transaction was cancelled; one entry per action, by name.
    #[error("transaction cancelled: {:?}", .0.iter().map(|c| (&c.action, &c.code)).collect::<Vec<_>>())]
    TransactionCanceled(Vec<Cancellation>),
    /// DynamoDB asked us to slow down and the retries ran out.
    #[error("throttled by DynamoDB")]
    Throttled,
    /// DynamoDB could not be reached or did not answer in time.
    #[error("DynamoDB unavailable: {0}")]
    Unavailable(String),
    /// Any other service error.
    #[error("DynamoDB error {code}: {message}")]
    Service {
        /// The error code, such as `ValidationException`.
        code: String,
        /// The service's message.
        message: String,
    },
    /// A stored item does not have the shape of its entity.
    #[error("stored item does not decode: {0}")]
    Decode(#[from] serde_dynamo::Error),
    /// A pagination start key that does not belong to the query.
    #[error("start key does not belong to this query")]
    ForeignStartKey,
    /// A key could not be derived from its declaration (a bug, never input).
    #[error("key schema: {0}")]
    Schema(#[from] keyschema::SchemaError),
}

impl StoreError {
    /// Whether a condition expression failed (the modyne-style predicate).
    pub fn is_conditional_check_failed(&self) -> bool {
        matches!(self, StoreError::ConditionFailed(_))
    }

    /// For a cancelled transaction: the names of the actions whose
    /// condition failed.
    pub fn failed_actions(&self) -> impl Iterator<Item = &str> {
        let reasons = match self {
            StoreError::TransactionCanceled(reasons) => reasons.as_slice(),
            _ => &[],
        };
        reasons.iter().filter(|c| c.code.as_deref() == Some("ConditionalCheckFailed")).map(|c| c.action.as_ref())
    }

    /// For a cancelled transaction: the positions (in the order they were
    /// added) of the actions whose condition failed.
    pub fn failed_at(&self) -> impl Iterator<Item = usize> + '_ {
        let reasons = match self {
            StoreError::TransactionCanceled(reasons) => reasons.as_slice(),
            _ => &[],
        };
        reasons.iter().enumerate().filter(|(_, c)| c.code.as_deref() == Some("ConditionalCheckFailed")).map(|(i, _)| i)
    }

    /// Whether the condition of the transaction's action `name` failed.
    pub fn failed(&self, name: &str) -> bool {
        self.failed_actions().any(|a| a == name)
    }

    /// The item as it was when the condition of action `name` failed
    /// (`None` if it did not fail, or the item does not exist).
    pub fn failed_item(&self, name: &str) -> Option<&HashMap<String, AttributeValue>> {
        match self {
            StoreError::TransactionCanceled(reasons) => reasons
                .iter()
                .find(|c| c.action == name && c.code.as_deref() == Some("ConditionalCheckFailed"))
                .and_then(|c| c.item.as_ref()),
            _ => None,
        }
    }

    /// Whether a transaction was cancelled only because another transaction
    /// was touching the same items (worth retrying).
    pub fn is_transaction_conflict(&self) -> bool {
        let codes = || match self {
            StoreError::TransactionCanceled(reasons) => reasons.iter().filter_map(|c| c.code.as_deref()).collect(),
            _ => Vec::new(),
        };
        matches!(self, StoreError::TransactionCanceled(_)
            if !codes().is_empty() && codes().iter().all(|c| *c == "TransactionConflict"))
            || matches!(self, StoreError::Service { code, .. } if code == "TransactionConflictException" || code == "TransactionInProgressException")
    }

    /// Whether a transaction's `ClientRequestToken` was used within the last
    /// 10 minutes with other actions (an idempotency key reused with another
    /// request).
    pub fn is_token_reused(&self) -> bool {
        matches!(self, StoreError::Service { code, .. } if code == "IdempotentParameterMismatchException")
    }

    /// Whether the table may answer differently if asked again shortly
    /// (throttling, unreachable, a conflicting transaction in flight).
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Throttled | StoreError::Unavailable(_)) || self.is_transaction_conflict()
    }

    /// Converts an `UpdateItem` error, keeping the old item of a failed
    /// condition (when `ReturnValuesOnConditionCheckFailure` asked for it).
    pub fn from_update<R: std::fmt::Debug>(err: SdkError<UpdateItemError, R>) -> Self {
        if let SdkError::ServiceError(ctx) = &err {
            if let UpdateItemError::ConditionalCheckFailedException(e) = ctx.err() {
                return StoreError::ConditionFailed(e.item().cloned());
            }
        }
        err.into()
    }

    /// Converts a `PutItem` error, keeping the old item of a failed
    /// condition (when `ReturnValuesOnConditionCheckFailure` asked for it).
    pub fn from_put<R: std::fmt::Debug>(err: SdkError<PutItemError, R>) -> Self {
        if let SdkError::ServiceError(ctx) = &err {
            if let PutItemError::ConditionalCheckFailedException(e) = ctx.err() {
                return StoreError::ConditionFailed(e.item().cloned());
            }
        }
        err.into()
    }
}

impl<E, R> From<SdkError<E, R>> for StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    fn from(err: SdkError<E, R>) -> Self {
        if std::error::Error::source(&err).is_some_and(crate::budget::is_out_of_time) {
            return StoreError::Unavailable(aws_sdk_dynamodb::error::DisplayErrorContext(&err).to_string());
        }
        match &err {
            SdkError::ServiceError(ctx) => {
                let e = ctx.err();
                match e.code().unwrap_or_default() {
                    "ConditionalCheckFailedException" => StoreError::ConditionFailed(None),
                    "ProvisionedThroughputExceededException" | "ThrottlingException" | "RequestLimitExceeded" => {
                        StoreError::Throttled
                    }
                    // DynamoDB's own failures, after the SDK's retries: the
                    // caller may try again (503), it is not our bug (500).
                    "InternalServerError" | "ServiceUnavailable" => {
                        StoreError::Unavailable(format!("DynamoDB {}", e.code().unwrap_or_default()))
                    }
                    // No error code: the answer itself could not be read
                    // (cut off, garbled). Whether a write applied is unknown.
                    "" => StoreError::Unavailable(format!("unreadable answer: {}", e.message().unwrap_or_default())),
                    code => StoreError::Service {
                        code: code.to_owned(),
                        message: e.message().unwrap_or_default().to_owned(),
                    },
                }
            }
            // Unreachable, timed out, or the connection cut while the answer
            // was read: whether a write applied is unknown, so the caller
            // retries (writes carry tokens or idempotency keys).
            SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
                StoreError::Unavailable(aws_sdk_dynamodb::error::DisplayErrorContext(&err).to_string())
            }
            _ => StoreError::Service {
                code: "Client".to_owned(),
                message: aws_sdk_dynamodb::error::DisplayErrorContext(&err).to_string(),
            },
        }
    }
}
