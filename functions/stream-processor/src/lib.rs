//! The table's stream processor (NEW_AND_OLD_IMAGES).
//!
//! Sparse-index flags: an active listing carries its GSI2 keys
//! (`CATEGORY#<categoryId>` / `LISTING#<listingId>`), a sold or removed one
//! does not. Each decision is a conditional write on the listing's *current*
//! state, not on the record's: a replayed, duplicated or reordered record
//! (a stale "active" after "removed") fails its condition and changes
//! nothing, so the effect is exactly once. Records that need no change cost
//! no write.
//!
//! Failures are reported per record (`batchItemFailures`): a malformed
//! record does not fail or block the rest of the batch.

use std::convert::Infallible;

use aws_lambda_events::dynamodb::{Event, EventRecord};
use aws_lambda_events::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use keyschema::ids::{CategoryId, ListingId};
use keyschema::model::ListingStatus;
use keyschema::schema::{EntityType, Index, ENTITY_TYPE};
use keyschema::write;
use lambda_runtime::LambdaEvent;
use serde::Deserialize;
use store::{Store, StoreError};

/// Why one record could not be processed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The record does not have the shape its entity needs.
    #[error("malformed record: {0}")]
    Malformed(String),
    /// The write failed (throttled, unavailable, ...); the record is retried.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What processing one record did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do for this record.
    Skipped,
    /// The listing entered the browse index.
    Indexed,
    /// The listing left the browse index.
    Unindexed,
    /// A write was attempted but the current item no longer needed it
    /// (a stale or repeated record).
    Stale,
}

/// The Lambda handler: processes every record, reports the failed ones.
pub async fn handler(store: &Store, event: LambdaEvent<Event>) -> Result<DynamoDbEventResponse, Infallible> {
    let mut response = DynamoDbEventResponse::default();
    for record in &event.payload.records {
        if let Err(e) = process(store, record).await {
            store::log_json(
                "ERROR",
                serde_json::json!({
                    "requestId": event.context.request_id,
                    "eventId": record.event_id,
                    "sequenceNumber": record.change.sequence_number,
                    "error": e.to_string(),
                }),
            );
            let mut failure = DynamoDbBatchItemFailure::default();
            failure.item_identifier = record.change.sequence_number.clone();
            response.batch_item_failures.push(failure);
        }
    }
    Ok(response)
}

/// Processes one record.
pub async fn process(store: &Store, record: &EventRecord) -> Result<Outcome, RecordError> {
    let malformed = |what: &str| RecordError::Malformed(what.to_owned());
    if record.change.sequence_number.is_none() {
        return Err(malformed("no sequence number"));
    }
    match record.event_name.as_str() {
        "REMOVE" => return Ok(Outcome::Skipped),
        "INSERT" | "MODIFY" => {}
        other => return Err(RecordError::Malformed(format!("unknown event name `{other}`"))),
    }
    let image = &record.change.new_image;
    let entity = match image.get(ENTITY_TYPE) {
        Some(serde_dynamo::AttributeValue::S(t)) => t.as_str(),
        _ => return Err(malformed("new image without entityType")),
    };
    if entity == EntityType::Listing.as_str() {
        let listing: ListingImage = serde_dynamo::from_item(image.clone())
            .map_err(|e| RecordError::Malformed(format!("listing image: {e}")))?;
        let indexed = image.contains_key(Index::Gsi2.pk());
        return browse_flag(store, &listing, indexed).await;
    }
    Ok(Outcome::Skipped)
}

/// The fields of a listing image the browse flag depends on.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListingImage {
    listing_id: ListingId,
    category_id: CategoryId,
    status: ListingStatus,
}

/// Sets or removes a listing's GSI2 keys so that exactly the active
/// listings are in the category browse index. The write that takes a
/// listing out of `active` already drops them (`write::listing::set_status`);
/// here they are added, and drift is repaired.
async fn browse_flag(store: &Store, listing: &ListingImage, indexed: bool) -> Result<Outcome, RecordError> {
    let active = listing.status == ListingStatus::Active;
    let (change, outcome) = match (active, indexed) {
        (true, false) => {
            (write::listing::index_for_browse(&listing.listing_id, &listing.category_id), Outcome::Indexed)
        }
        (false, true) => (write::listing::unindex_for_browse(&listing.listing_id), Outcome::Unindexed),
        _ => return Ok(Outcome::Skipped),
    };
    match store.update(&change).await {
        Ok(_) => Ok(outcome),
        Err(e) if e.is_conditional_check_failed() => Ok(Outcome::Stale),
        Err(e) => Err(e.into()),
    }
}
