//! Decoding stream records into work: a listing image for the browse flag,
//! or a counted instance's change (a review's rating, a favorite).

use aws_lambda_events::dynamodb::EventRecord;
use keyschema::ids::{CategoryId, ListingId};
use keyschema::keys;
use keyschema::model::{Favorite, FavoriteMarker, ListingStatus, MarkerState, Money, RatingMarker, Review};
use keyschema::schema::{EntityType, Index, ENTITY_TYPE};
use keyschema::write::attr;
use serde::Deserialize;
use store::StoreError;

use crate::counters::{Aggregate, CountChange};

/// Why one record could not be processed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The record does not have the shape its entity needs; it never will.
    #[error("malformed record: {0}")]
    Malformed(String),
    /// The write failed (throttled, unavailable, ...); the record is retried.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One record, classified.
#[derive(Debug)]
pub enum Work {
    /// A listing image and whether it carries browse keys.
    Listing(ListingImage, bool),
    /// A counted instance inserted or removed.
    Count(CountChange),
    /// Nothing to do.
    Skip,
}

/// The fields of a listing image the browse flag depends on.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingImage {
    /// The listing.
    pub listing_id: ListingId,
    /// Its category (the browse partition).
    pub category_id: CategoryId,
    /// Only active listings are browsed.
    pub status: ListingStatus,
    /// The price index orders by it.
    pub price: Money,
}

/// What a record is about.
pub fn classify(record: &EventRecord) -> Result<Work, RecordError> {
    let malformed = |what: String| RecordError::Malformed(what);
    let Some(sequence_number) = record.change.sequence_number.clone() else {
        return Err(malformed("no sequence number".into()));
    };
    let (image, inserted) = match record.event_name.as_str() {
        "INSERT" => (&record.change.new_image, true),
        "MODIFY" => (&record.change.new_image, false),
        "REMOVE" => (&record.change.old_image, false),
        other => return Err(malformed(format!("unknown event name `{other}`"))),
    };
    let entity = match image.get(ENTITY_TYPE) {
        Some(serde_dynamo::AttributeValue::S(t)) => t.as_str(),
        // Deletions of items that never had a type: nothing to do.
        _ if record.event_name == "REMOVE" => return Ok(Work::Skip),
        _ => return Err(malformed("image without entityType".into())),
    };
    let decode = |what: &str| {
        let what = what.to_owned();
        move |e: serde_dynamo::Error| malformed(format!("{what} image: {}", telemetry::redacted(&e)))
    };
    if entity == EntityType::Listing.as_str() && record.event_name != "REMOVE" {
        let listing: ListingImage = serde_dynamo::from_item(image.clone()).map_err(decode("listing"))?;
        // Indexed right: in GSI2, and in GSI3 at the price it has now.
        let price_key = keys::listing::by_price(&listing.category_id, listing.price, &listing.listing_id).sk;
        let indexed_right = image.contains_key(Index::Gsi2.pk())
            && matches!(image.get(Index::Gsi3.sk()), Some(serde_dynamo::AttributeValue::S(sk)) if *sk == price_key);
        let indexed_at_all = image.contains_key(Index::Gsi2.pk()) || image.contains_key(Index::Gsi3.pk());
        let indexed = if listing.status == ListingStatus::Active { indexed_right } else { indexed_at_all };
        return Ok(Work::Listing(listing, indexed));
    }
    if entity == EntityType::Review.as_str() && record.event_name != "MODIFY" {
        let review: Review = serde_dynamo::from_item(image.clone()).map_err(decode("review"))?;
        if !(Review::MIN_RATING..=Review::MAX_RATING).contains(&review.rating) {
            return Err(malformed(format!("review rating {} out of range", review.rating)));
        }
        let marker = RatingMarker {
            review_id: review.review_id,
            reviewed_user_id: review.reviewed_user_id.clone(),
            state: MarkerState::Counted,
            weight: u32::from(review.rating),
        };
        return Ok(Work::Count(CountChange {
            sequence_number,
            aggregate: Aggregate {
                key: keys::user::key(&review.reviewed_user_id),
                sum: Some(attr::RATING_SUM),
                count: attr::REVIEW_COUNT,
            },
            marker: keys::rating_marker::key(&review.reviewed_user_id, &review.review_id),
            marker_item: store::item::to_item(&marker)?,
            version: None,
            weight: u32::from(review.rating),
            inserted,
        }));
    }
    if entity == EntityType::Favorite.as_str() && record.event_name != "MODIFY" {
        let favorite: Favorite = serde_dynamo::from_item(image.clone()).map_err(decode("favorite"))?;
        let marker = FavoriteMarker {
            user_id: favorite.user_id.clone(),
            listing_id: favorite.listing_id,
            version: favorite.favorite_id,
            state: MarkerState::Counted,
            weight: 1,
        };
        return Ok(Work::Count(CountChange {
            sequence_number,
            aggregate: Aggregate {
                key: keys::listing::key(&favorite.listing_id),
                sum: None,
                count: attr::FAVORITE_COUNT,
            },
            marker: keys::favorite_marker::key(&favorite.user_id, &favorite.listing_id),
            marker_item: store::item::to_item(&marker)?,
            version: Some(favorite.favorite_id.ulid()),
            weight: 1,
            inserted,
        }));
    }
    Ok(Work::Skip)
}
