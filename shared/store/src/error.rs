//! Store errors, classified so callers can answer the right status: a failed
//! condition is a business outcome (409/404), throttling is a 503, anything
//! else is internal.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// What went wrong talking to the table.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A write's condition expression was false. Carries the item as it was,
    /// when the request asked for it (`ReturnValuesOnConditionCheckFailure`).
    #[error("conditional check failed")]
    ConditionFailed(Option<HashMap<String, AttributeValue>>),
    /// A transaction was cancelled; one reason code per action, in order
    /// (`None` where that action was fine).
    #[error("transaction cancelled: {0:?}")]
    TransactionCanceled(Vec<Option<String>>),
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
}

impl StoreError {
    /// Whether a condition expression failed (the modyne-style predicate).
    pub fn is_conditional_check_failed(&self) -> bool {
        matches!(self, StoreError::ConditionFailed(_))
    }

    /// For a cancelled transaction: the indexes of the actions whose
    /// condition failed.
    pub fn failed_conditions(&self) -> Vec<usize> {
        match self {
            StoreError::TransactionCanceled(reasons) => reasons
                .iter()
                .enumerate()
                .filter(|(_, r)| r.as_deref() == Some("ConditionalCheckFailed"))
                .map(|(i, _)| i)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether a transaction was cancelled only because another transaction
    /// was touching the same items (worth retrying).
    pub fn is_transaction_conflict(&self) -> bool {
        matches!(self, StoreError::TransactionCanceled(reasons)
            if reasons.iter().flatten().all(|r| r == "TransactionConflict") && reasons.iter().flatten().next().is_some())
            || matches!(self, StoreError::Service { code, .. } if code == "TransactionConflictException" || code == "TransactionInProgressException")
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

    /// Converts a transaction error, keeping the cancellation reasons.
    pub fn from_transaction<R: std::fmt::Debug>(err: SdkError<TransactWriteItemsError, R>) -> Self {
        if let SdkError::ServiceError(ctx) = &err {
            if let TransactWriteItemsError::TransactionCanceledException(e) = ctx.err() {
                let reasons =
                    e.cancellation_reasons().iter().map(|r| r.code().filter(|c| *c != "None").map(str::to_owned));
                return StoreError::TransactionCanceled(reasons.collect());
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
        match &err {
            SdkError::ServiceError(ctx) => {
                let e = ctx.err();
                match e.code().unwrap_or_default() {
                    "ConditionalCheckFailedException" => StoreError::ConditionFailed(None),
                    "ProvisionedThroughputExceededException" | "ThrottlingException" | "RequestLimitExceeded" => {
                        StoreError::Throttled
                    }
                    code => StoreError::Service {
                        code: code.to_owned(),
                        message: e.message().unwrap_or_default().to_owned(),
                    },
                }
            }
            SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
                StoreError::Unavailable(aws_sdk_dynamodb::error::DisplayErrorContext(&err).to_string())
            }
            _ => StoreError::Service {
                code: "Client".to_owned(),
                message: aws_sdk_dynamodb::error::DisplayErrorContext(&err).to_string(),
            },
        }
    }
}
