//! Why deriving from a record or an item failed: typed, so callers decide
//! on the kind (skip, retry, report), never on a message.

use store::StoreError;

/// Why a derivation could not be done.
#[derive(Debug, thiserror::Error)]
pub enum DerivedError {
    /// The record or item does not have the shape its entity needs; it
    /// never will (skipped and logged, never retried).
    #[error("malformed: {0}")]
    Malformed(String),
    /// Other writers kept moving the markers of an aggregate between its
    /// reads and its writes, through every attempt (retried later).
    #[error("markers of {0} kept moving")]
    Contended(String),
    /// The table could not be read or written (throttled, unavailable, ...).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl DerivedError {
    /// A malformed record or item.
    pub fn malformed(what: impl std::fmt::Display) -> Self {
        DerivedError::Malformed(what.to_string())
    }

    /// Whether it can never succeed (skip, do not retry).
    pub fn is_malformed(&self) -> bool {
        matches!(self, DerivedError::Malformed(_))
    }
}

impl From<keyschema::SchemaError> for DerivedError {
    fn from(e: keyschema::SchemaError) -> Self {
        DerivedError::Malformed(e.to_string())
    }
}

impl From<serde_dynamo::Error> for DerivedError {
    fn from(e: serde_dynamo::Error) -> Self {
        DerivedError::Malformed(telemetry::redacted(&e))
    }
}
